// The hand-written files that run Herald's processes against the registry of processes
// (tools/stack/src/processes.generated.json, generated from services/*/src/manifest.ts like the
// chart's process list and routes and compose's routes, which therefore need no comparison):
// the values run every process, each Dockerfile has a stage that runs the process's command,
// and docker-compose.yml has a service (and a migration service) for each.
// Each function returns a list of problems (empty when all agree).
import fs from 'node:fs';
import path from 'node:path';

function dockerfileCommands(file) {
  if (!fs.existsSync(file)) return null;
  return [...fs.readFileSync(file, 'utf8').matchAll(/^CMD\s+(\[.*\])\s*$/gm)].map(([, json]) =>
    JSON.stringify(JSON.parse(json)),
  );
}

/**
 * With the default values the chart runs exactly the registry's processes, and each one's
 * Dockerfile has a stage running its command.
 */
export function checkProcesses(registry, manifests, fullname, repoRoot) {
  const problems = [];
  const deployments = manifests.filter((m) => m.kind === 'Deployment');
  for (const d of deployments) {
    const name = d.metadata.name.slice(fullname.length + 1);
    if (!registry.some((s) => s.name === name))
      problems.push(`the chart runs ${name}, which the registry does not`);
  }
  for (const service of registry) {
    if (!deployments.some((d) => d.metadata.name === `${fullname}-${service.name}`)) {
      problems.push(`the chart has no Deployment for ${service.name}`);
    }
    const packageDir = service.entry.split('/dist/')[0];
    const command = JSON.stringify([
      'node',
      ...(service.nodeArgs ?? []),
      path.posix.relative(packageDir, service.entry),
    ]);
    const commands = dockerfileCommands(path.join(repoRoot, packageDir, 'Dockerfile'));
    if (!commands) problems.push(`${packageDir}/Dockerfile is missing`);
    else if (!commands.includes(command))
      problems.push(`${packageDir}/Dockerfile has no stage that runs ${command}`);
  }
  return problems;
}

/** docker-compose.yml runs every process of the registry, and the migration of each that has one. */
export function checkComposeServices(registry, compose) {
  const services = compose.services ?? {};
  const problems = [];
  for (const service of registry) {
    if (!services[service.name]) problems.push(`docker-compose.yml does not run ${service.name}`);
    if (service.migrate && !services[`${service.name}-migrate`]) {
      problems.push(`docker-compose.yml has no ${service.name}-migrate service`);
    }
  }
  return problems;
}
