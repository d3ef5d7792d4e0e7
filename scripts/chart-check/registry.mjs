// The chart, the Dockerfiles and docker-compose.yml against scripts/stack/services.mjs, the one
// registry of Herald's processes: the same processes, secrets, databases, commands and routes.
// Each function returns a list of problems (empty when all agree).
import fs from 'node:fs';
import path from 'node:path';

const SHARED_ENV = new Set(['DATABASE_URL', 'REDIS_URL', 'REDIS_CLUSTER_NODES']);
const escapeRegex = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const key = (r) => `${r.type} ${r.path} -> ${r.service}`;

function diff(what, expected, actual) {
  const want = new Set(expected.map(key));
  const got = new Set(actual.map(key));
  return [
    ...[...want].filter((k) => !got.has(k)).map((k) => `${what} lacks ${k}`),
    ...[...got]
      .filter((k) => !want.has(k))
      .map((k) => `${what} has ${k}, which the registry does not`),
  ];
}

/** The registry's routes as the chart's Ingresses must have them. */
function expectedIngressPaths(registry) {
  const paths = [];
  for (const service of registry) {
    const routes = service.routes ?? [];
    const exacts = routes.flatMap((r) => (r.exact ? [r.exact] : []));
    for (const route of routes) {
      const p = route.exact ?? route.prefix ?? route.regex;
      if (p.replace(/^\^/, '').startsWith('/admin/')) {
        // the operator Ingress is all regular expressions (ingress-nginx anchors them at the start)
        const regex =
          route.regex?.replace(/^\^/, '') ?? `${escapeRegex(p)}${route.exact ? '$' : ''}`;
        paths.push({ type: 'operator', path: regex, service: service.name });
      } else if (route.regex) {
        paths.push({ type: 'public regex (unsupported)', path: p, service: service.name });
      } else if (route.exact) {
        // an exact path with the same prefix under it is one Kubernetes Prefix path
        if (!routes.some((r) => r.prefix === `${route.exact}/`)) {
          paths.push({ type: 'Exact', path: p, service: service.name });
        }
      } else {
        const bare = p.replace(/\/$/, '');
        paths.push({
          type: 'Prefix',
          path: exacts.includes(bare) ? bare : p,
          service: service.name,
        });
      }
    }
  }
  return paths;
}

/** The rendered Ingresses (with the operator one on) route exactly the registry's paths. */
export function checkIngressRoutes(registry, manifests, fullname) {
  const actual = [];
  for (const ingress of manifests.filter((m) => m.kind === 'Ingress')) {
    const operator = ingress.metadata.name === `${fullname}-operator`;
    for (const rule of ingress.spec.rules) {
      for (const p of rule.http.paths) {
        actual.push({
          type: operator ? 'operator' : p.pathType,
          path: p.path,
          service: p.backend.service.name.slice(fullname.length + 1),
        });
      }
    }
  }
  return diff('the chart Ingresses', expectedIngressPaths(registry), actual);
}

/** docker-compose.yml's nginx routes exactly the registry's routes, as the local nginx does. */
export function checkComposeRoutes(registry, compose) {
  const expected = registry.flatMap((service) =>
    (service.routes ?? []).map((r) => ({
      type: r.exact ? '=' : r.prefix ? '^~' : '~',
      path: r.exact ?? r.prefix ?? r.regex,
      service: service.name,
    })),
  );
  const config = (compose.configs?.nginx?.content ?? '').replaceAll('$$', '$');
  const actual = [
    ...config.matchAll(/location\s+(=|\^~|~)\s+(\S+)\s*\{\s*proxy_pass\s+\$(\w+);/g),
  ].map(([, type, p, service]) => ({ type, path: p, service }));
  return diff("docker-compose.yml's nginx", expected, actual);
}

function dockerfileCommands(file) {
  if (!fs.existsSync(file)) return null;
  return [...fs.readFileSync(file, 'utf8').matchAll(/^CMD\s+(\[.*\])\s*$/gm)].map(([, json]) =>
    JSON.stringify(JSON.parse(json)),
  );
}

/**
 * Every registry process is a chart process and the other way round, with the registry's
 * secrets, database, command (one its Dockerfile runs), migration and Contact-data role.
 */
export function checkProcesses(registry, manifests, fullname, repoRoot) {
  const problems = [];
  const of = (kind, name) =>
    manifests.find((m) => m.kind === kind && m.metadata.name === `${fullname}-${name}`);
  const deployments = manifests.filter((m) => m.kind === 'Deployment');
  for (const d of deployments) {
    const name = d.metadata.name.slice(fullname.length + 1);
    if (!registry.some((s) => s.name === name))
      problems.push(`the chart runs ${name}, which the registry does not`);
  }
  const contactsConfig = of('ConfigMap', 'contacts')?.data ?? {};
  for (const service of registry) {
    const deployment = of('Deployment', service.name);
    if (!deployment) {
      problems.push(`the chart has no Deployment for ${service.name}`);
      continue;
    }
    const container = deployment.spec.template.spec.containers[0];
    const fromSecrets = container.env.filter((e) => e.valueFrom?.secretKeyRef);
    const secrets = fromSecrets
      .map((e) => e.name)
      .filter((n) => !SHARED_ENV.has(n))
      .sort();
    const listed = [...(service.secrets ?? [])].sort();
    if (secrets.join() !== listed.join()) {
      problems.push(
        `${service.name} gets secrets [${secrets}] in the chart, [${listed}] in the registry`,
      );
    }
    const databaseKey = fromSecrets.find((e) => e.name === 'DATABASE_URL')?.valueFrom.secretKeyRef
      .key;
    const wanted = service.database
      ? `${service.database.replace(/^herald_/, '').toUpperCase()}_DATABASE_URL`
      : undefined;
    if (databaseKey !== wanted) {
      problems.push(
        `${service.name} reads DATABASE_URL from ${databaseKey} in the chart, ${wanted} by the registry`,
      );
    }
    const packageDir = service.entry.split('/dist/')[0];
    const command = JSON.stringify([
      'node',
      ...(service.nodeArgs ?? []),
      path.posix.relative(packageDir, service.entry),
    ]);
    if (JSON.stringify(container.command) !== command) {
      problems.push(
        `${service.name} runs ${JSON.stringify(container.command)} in the chart, ${command} in the registry`,
      );
    }
    const commands = dockerfileCommands(path.join(repoRoot, packageDir, 'Dockerfile'));
    if (!commands) problems.push(`${packageDir}/Dockerfile is missing`);
    else if (!commands.includes(command))
      problems.push(`${packageDir}/Dockerfile has no stage that runs ${command}`);
    if (Boolean(service.migrate) !== Boolean(of('Job', `${service.name}-migrate`))) {
      problems.push(
        `${service.name}: a migration Job in the chart only if the registry has a migrate entry`,
      );
    }
    if (service.holdsContactData) {
      const url = `http://${fullname}-${service.name}:`;
      if (!(contactsConfig.CONTACT_DATA_SERVICES ?? '').includes(url)) {
        problems.push(
          `contacts' CONTACT_DATA_SERVICES lacks ${service.name}, which holds Contact data`,
        );
      }
    }
  }
  return problems;
}
