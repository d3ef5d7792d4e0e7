// nginx ingress on 127.0.0.1:8080, rendered from infra/nginx/nginx.conf.template and the
// `routes` and `allow` of the registry's services. Runs as
// `nginx -p .herald/nginx -c ... -e ...`.
import fs from 'node:fs';
import path from 'node:path';
import {
  dataDir,
  host,
  infraDir,
  ingressUrl,
  logDir,
  portEnvVars,
  ports,
  stackServices,
} from './config.mjs';
import { StackError, say } from './output.mjs';
import {
  ensureDir,
  ensureTraversable,
  readText,
  renderTemplate,
  writeIfChanged,
} from './files.mjs';
import { isRoot, livePid, run, sleep, stopProcess, waitFor } from './processes.mjs';
import { assertPortFree, httpRequest } from './net.mjs';

const component = 'nginx';
const prefix = path.join(dataDir, 'nginx');
export const nginxPaths = {
  prefix,
  conf: path.join(prefix, 'nginx.conf'),
  pidFile: path.join(prefix, 'nginx.pid'),
  tmp: path.join(prefix, 'tmp'),
  errorLog: path.join(logDir, 'nginx-error.log'),
  accessLog: path.join(logDir, 'nginx-access.log'),
};

function upstreamName(service) {
  return `herald_${service.name.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

/** A route of the registry as an nginx location line. Shapes: {exact}, {prefix}, {regex}. */
function locationFor(route, service) {
  const quote = (s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  if (typeof route.exact === 'string' && route.exact.startsWith('/'))
    return `location = ${quote(route.exact)}`;
  if (typeof route.prefix === 'string' && route.prefix.startsWith('/'))
    return `location ^~ ${quote(route.prefix)}`;
  if (typeof route.regex === 'string' && route.regex.length)
    return `location ~ ${quote(route.regex)}`;
  throw new StackError(
    component,
    `bad route ${JSON.stringify(route)} of service ${service.name}: expected {exact: "/path"}, {prefix: "/path/"} or {regex: "^/..."}`,
  );
}

/**
 * The process nginx sends `uri` to, chosen as nginx chooses a location: an exact one, else the
 * longest `^~` prefix, else the first regex in registry order; null for the catch-all 404.
 */
export function ingressTarget(uri, services = stackServices) {
  const rules = services.flatMap((s) => s.routes.map((rule) => ({ rule, name: s.name })));
  const exact = rules.find(({ rule }) => rule.exact === uri);
  if (exact) return exact.name;
  const prefix = rules
    .filter(({ rule }) => typeof rule.prefix === 'string' && uri.startsWith(rule.prefix))
    .sort((a, b) => b.rule.prefix.length - a.rule.prefix.length)[0];
  if (prefix) return prefix.name;
  const regex = rules.find(
    ({ rule }) => typeof rule.regex === 'string' && new RegExp(rule.regex).test(uri),
  );
  return regex?.name ?? null;
}

/**
 * Each path a service serves, where nginx routes that path to that service: its Express path
 * (`route`), the methods its own 405 names there (the registry's `allow`) and the regex nginx
 * matches the raw request URI with, taking the trailing slash Express also takes when nginx
 * routes that form there too. Paths with more literal segments first, as nginx takes the first
 * regex that matches (`/v1/contacts/by-id/x` before `/v1/contacts/{externalId}`).
 */
function servedPaths(services) {
  return services
    .flatMap((service) =>
      (service.allow ?? []).flatMap(({ path: route, methods }) => {
        const sample = route.replace(/:\w+/g, 'x');
        if (ingressTarget(sample, services) !== service.name) return [];
        const slash = ingressTarget(`${sample}/`, services) === service.name ? '/?' : '';
        const pattern = route.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/?]+');
        return [
          {
            literal: route.split('/').filter((segment) => !segment.startsWith(':')).length,
            pattern: `^${pattern}${slash}(\\?.*)?$`,
            route,
            methods: methods.join(', '),
          },
        ];
      }),
    )
    .sort((a, b) => b.literal - a.literal);
}

/** `map` lines from each path a service serves to the methods its own 405 names there. */
export function allowMapLines(services = stackServices) {
  return servedPaths(services)
    .map(({ pattern, methods }) => `    "~${pattern}" "${methods}";`)
    .join('\n');
}

/** `map` lines from each path a service serves to its pattern, for the access log. */
export function routeMapLines(services = stackServices) {
  return servedPaths(services)
    .map(({ pattern, route }) => `    "~${pattern}" "${route}";`)
    .join('\n');
}

export function renderNginxConf() {
  const routed = stackServices.filter((s) => s.routes.length);
  const upstreams = routed
    .map(
      (s) =>
        `  upstream ${upstreamName(s)} {\n` +
        `    server ${host}:${s.port} max_fails=0;\n` +
        '    keepalive 64;\n' +
        '    keepalive_timeout 4s;\n' +
        '  }',
    )
    .join('\n');
  const routes = routed
    .map(
      (s) =>
        `    # ${s.name}\n` +
        s.routes
          .map(
            (r) =>
              `    ${locationFor(r, s)} {\n      proxy_pass http://${upstreamName(s)};\n    }\n`,
          )
          .join(''),
    )
    .join('');
  let userDirective = '';
  if (isRoot) {
    // Workers drop root; nginx hands its temp folders to this user itself.
    const group = /^nogroup:/m.test(readText('/etc/group') ?? '') ? 'nogroup' : 'nobody';
    userDirective = `user nobody ${group};`;
  }
  return renderTemplate(path.join(infraDir, 'nginx', 'nginx.conf.template'), {
    USER_DIRECTIVE: userDirective,
    PID_FILE: nginxPaths.pidFile,
    ERROR_LOG: nginxPaths.errorLog,
    ACCESS_LOG: nginxPaths.accessLog,
    TMP_DIR: nginxPaths.tmp,
    LISTEN: `${host}:${ports.ingress}`,
    STATUS_LISTEN: `${host}:${ports.nginxStatus}`,
    UPSTREAMS: upstreams,
    ROUTES: routes,
    ALLOW_MAP: allowMapLines(),
    ROUTE_MAP: routeMapLines(),
  });
}

export function nginxPid() {
  return livePid(nginxPaths.pidFile, 'nginx');
}

/** True when our ingress answers: an unknown path gets nginx's JSON 404. */
export async function nginxAnswers(timeoutMs = 2000) {
  try {
    const res = await httpRequest(`${ingressUrl}/__herald/probe`, {
      timeoutMs,
      headers: { 'X-Request-Id': 'herald-stack-probe', 'User-Agent': 'herald-stack' },
    });
    return res.status === 404 && res.body.includes('"not_found"');
  } catch {
    return false;
  }
}

function nginxArgs(extra = []) {
  return ['-p', `${prefix}/`, '-c', nginxPaths.conf, '-e', nginxPaths.errorLog, ...extra];
}

async function testConfig(bins) {
  const r = await run(bins.nginx, nginxArgs(['-t', '-q']), { check: false, timeoutMs: 30000 });
  if (r.code !== 0) {
    throw new StackError(
      component,
      `the rendered ${nginxPaths.conf} is invalid:\n${(r.stderr + r.stdout).trim()}`,
    );
  }
}

/** Renders the config; starts nginx, or reloads it when the config changed. */
export async function ensureNginx(bins) {
  ensureDir(prefix);
  ensureDir(nginxPaths.tmp, 0o755);
  ensureDir(logDir);
  if (isRoot) ensureTraversable(nginxPaths.tmp, dataDir);
  const changed = writeIfChanged(nginxPaths.conf, renderNginxConf());
  const pid = nginxPid();
  if (pid) {
    if (changed) {
      await testConfig(bins);
      say('nginx: routes changed, reloading');
      process.kill(pid, 'SIGHUP');
      await sleep(300);
    }
    try {
      await waitFor(() => nginxAnswers(), { timeoutMs: 15000, what: `nginx on ${ingressUrl}` });
    } catch (err) {
      throw new StackError(component, err.message, { logFile: nginxPaths.errorLog });
    }
    return changed ? 'reloaded' : 'running';
  }
  await assertPortFree(component, ports.ingress, portEnvVars.ingress);
  await assertPortFree(component, ports.nginxStatus, portEnvVars.nginxStatus);
  await testConfig(bins);
  say(`nginx: starting on ${ingressUrl}`);
  fs.rmSync(nginxPaths.pidFile, { force: true });
  try {
    await run(bins.nginx, nginxArgs(), {
      appendTo: nginxPaths.errorLog,
      detached: true,
      timeoutMs: 30000,
    });
    await waitFor(() => nginxAnswers(), { timeoutMs: 15000, what: `nginx on ${ingressUrl}` });
  } catch (err) {
    throw new StackError(component, err.message, { logFile: nginxPaths.errorLog });
  }
  return 'started';
}

export async function stopNginx() {
  const pid = nginxPid();
  if (!pid) return 'not running';
  say('nginx: stopping');
  // SIGQUIT: graceful (finish open requests); SIGKILL after 10 s.
  return stopProcess(pid, { signal: 'SIGQUIT', timeoutMs: 10000 });
}

export async function nginxStatus() {
  const pid = nginxPid();
  const ok = pid ? await nginxAnswers() : false;
  return {
    component,
    state: ok ? 'running' : pid ? 'not answering' : 'stopped',
    pid,
    address: ingressUrl,
    logFile: nginxPaths.accessLog,
    extraLogs: [nginxPaths.errorLog],
    ok,
  };
}
