// `node --test tools/generate/src/render.test.mjs`: the local stack's registry carries each
// process's metrics port, and no two ports of the stack may be the same; it names the methods
// each served path takes, as the service's own 405 does.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { cliOperatorRoutes, stackRegistry } from './render.mjs';
import { repoRoot as root } from '@herald/stack/config.mjs';

const process_ = (name, port, metricsPort) => ({
  name,
  entry: 'dist/index.js',
  port,
  metricsPort,
  database: null,
  secrets: [],
  settings: [],
  calls: {},
});
const manifests = (processes) => [
  { dir: 'demo', manifest: { name: 'demo', processes, routes: {} } },
];

test('when rendered, then every entry has its metrics port beside its port', () => {
  const registry = JSON.parse(
    stackRegistry(manifests([process_('b', 18082, 19082), process_('a', 18081, 19081)]), {
      topicSettings: {},
    }),
  );
  assert.deepEqual(
    registry.map(({ name, port, metricsPort }) => ({ name, port, metricsPort })),
    [
      { name: 'a', port: 18081, metricsPort: 19081 },
      { name: 'b', port: 18082, metricsPort: 19082 },
    ],
  );
});

test('when a metrics port is taken twice, or is another process port, or missing, then rendering fails naming it', () => {
  const render = (processes) => () => stackRegistry(manifests(processes), { topicSettings: {} });
  assert.throws(
    render([process_('a', 18081, 19081), process_('b', 18082, 19081)]),
    /b: metricsPort 19081 is already a's metricsPort/,
  );
  assert.throws(
    render([process_('a', 18081, 18082), process_('b', 18082, 19082)]),
    /b: port 18082 is already a's metricsPort/,
  );
  assert.throws(render([process_('a', 18081, undefined)]), /a: metricsPort must be a TCP port/);
});

test('when a second stack moves a service port, then its metrics port moves along unless its own variable places it', () => {
  const ports = (env) => {
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const { findService } = await import('./tools/stack/src/config.mjs'); const s = findService('auth'); console.log(JSON.stringify([s.port, s.metricsPort, s.metricsUrl]));",
      ],
      { cwd: root, env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' },
    );
    assert.equal(run.status, 0, run.stderr);
    return JSON.parse(run.stdout);
  };
  const [port, metricsPort] = ports({});
  assert.deepEqual(ports({ HERALD_AUTH_PORT: '41081' }), [
    41081,
    41081 + (metricsPort - port),
    `http://127.0.0.1:${41081 + (metricsPort - port)}/metrics`,
  ]);
  assert.deepEqual(ports({ HERALD_AUTH_PORT: '41081', HERALD_AUTH_METRICS_PORT: '42000' }), [
    41081,
    42000,
    'http://127.0.0.1:42000/metrics',
  ]);
});

test('when a service has routes, then its first process lists the methods each routed path takes, as its 405 names them', () => {
  const route = (method, path, extra = {}) => ({
    method,
    path,
    audience: 'public',
    access: { kind: 'none' },
    summary: '',
    ...extra,
  });
  const registry = JSON.parse(
    stackRegistry(
      [
        {
          dir: 'demo',
          manifest: {
            name: 'demo',
            processes: [process_('demo', 18081, 19081), process_('demo-worker', 18082, 19082)],
            routes: {
              get: route('get', '/v1/things/:id'),
              put: route('put', '/v1/things/:id', { audience: 'operator' }),
              page: route('get', '/pages', { page: true }),
              internal: route('post', '/internal/v1/things', { audience: 'internal' }),
              keys: route('get', '/.well-known/keys', { methodNotAllowed: false }),
            },
          },
        },
      ],
      { topicSettings: {} },
    ),
  );
  assert.deepEqual(registry[0].allow, [
    { path: '/v1/things/:id', methods: ['GET', 'PUT'] },
    { path: '/pages', methods: ['GET'] },
  ]);
  assert.equal(registry[1].allow, undefined);
});

test("when a process has operator routes, then the CLI's route list names each anchored expression with its process, and no public route", () => {
  const withRoutes = (name, port, ingress) => ({ ...process_(name, port, port + 1000), ingress });
  const text = cliOperatorRoutes(
    manifests([
      withRoutes('auth', 18081, [{ exact: '/v1/token' }, { regex: '^/admin/v1/tenants/?$' }]),
      withRoutes('billing', 18084, [{ regex: '^/admin/v1/tenants/[^/]+/billing$' }]),
    ]),
  );
  assert.match(text, /\{ regex: "\^\/admin\/v1\/tenants\/\?\$", service: "auth" \}/);
  assert.match(
    text,
    /\{ regex: "\^\/admin\/v1\/tenants\/\[\^\/\]\+\/billing\$", service: "billing" \}/,
  );
  assert.doesNotMatch(text, /v1\/token/);
  assert.throws(
    () => cliOperatorRoutes(manifests([withRoutes('auth', 18081, [{ regex: '^/v1/x$' }])])),
    /a regex route must be an operator route/,
  );
});
