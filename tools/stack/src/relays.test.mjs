// `node --test tools/stack/src/relays.test.mjs`: several events relays in the local stack
// (HERALD_EVENTS_RELAYS): their names, ports, files, environment and Prometheus targets.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

// config.mjs reads the environment once, on import: set it first.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-relays-'));
process.env.HERALD_DATA_DIR = dataDir;
process.env.HERALD_EVENTS_RELAYS = '3';
process.env.HERALD_EVENTS_RELAY_3_PORT = '28000';
for (const name of ['HERALD_EVENTS_RELAY_PORT', 'HERALD_EVENTS_RELAY_METRICS_PORT']) {
  delete process.env[name];
}
const { findService, stackServices } = await import('./config.mjs');
const { serviceEnv } = await import('./service-runner.mjs');
const { renderConfig } = await import('./prometheus.mjs');
after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const relay = (name) => findService(name);

test('when HERALD_EVENTS_RELAYS is 3, then the registry relay is followed by two more of its own', () => {
  const names = stackServices.map((s) => s.name);
  const at = names.indexOf('events-relay');
  assert.deepEqual(names.slice(at), ['events-relay', 'events-relay-2', 'events-relay-3']);
  const [first, second] = [relay('events-relay'), relay('events-relay-2')];
  assert.equal(second.entryPath, first.entryPath);
  assert.deepEqual(second.nodeArgs, first.nodeArgs);
  assert.equal(second.niceness, first.niceness);
  assert.deepEqual(second.after, ['events']);
  assert.equal(second.replicaOf, 'events-relay');
  assert.equal(first.replicaOf, null);
  assert.equal(second.pidFile, path.join(dataDir, 'run', 'events-relay-2.pid'));
  assert.equal(second.logFile, path.join(dataDir, 'logs', 'events-relay-2.log'));
});

test('when a relay is added, then its ports are 100 apart per relay unless its own variable places it', () => {
  const first = relay('events-relay');
  assert.equal(relay('events-relay-2').port, first.port + 100);
  assert.equal(relay('events-relay-2').metricsPort, first.metricsPort + 100);
  assert.equal(relay('events-relay-2').url, `http://127.0.0.1:${first.port + 100}`);
  // HERALD_EVENTS_RELAY_3_PORT moves its metrics port along, as for every service.
  assert.equal(relay('events-relay-3').port, 28000);
  assert.equal(relay('events-relay-3').metricsPort, 28000 + first.metricsPort - first.port);
});

test('when a tool names a relay beyond the configured ones, then it is found; past the limit it is not', () => {
  const fifth = relay('events-relay-5');
  assert.equal(fifth.port, relay('events-relay').port + 400);
  assert.equal(stackServices.includes(fifth), false);
  assert.throws(() => findService('events-relay-9'), /unknown service/);
  assert.throws(() => findService('events-relay-1'), /unknown service/);
});

test('when a second relay runs, then it is the same service to telemetry, with ports of its own', () => {
  const env = serviceEnv('events-relay-2', {});
  assert.equal(env.PORT, String(relay('events-relay-2').port));
  assert.equal(env.METRICS_PORT, String(relay('events-relay-2').metricsPort));
  assert.equal(env.OTEL_SERVICE_NAME, 'herald-events-relay');
  assert.equal(env.DATABASE_URL, serviceEnv('events-relay', {}).DATABASE_URL);
  // Nothing calls a relay: the other services' settings do not change with their number.
  const events = serviceEnv('events', {});
  assert.equal(events.SERVICE_URL_EVENTS_RELAY, relay('events-relay').url);
  assert.equal(
    Object.keys(events).some((k) => k.startsWith('SERVICE_URL_EVENTS_RELAY_')),
    false,
  );
});

test('when there are three relays, then Prometheus scrapes them as targets of one job', () => {
  const config = renderConfig();
  const targets = ['events-relay', 'events-relay-2', 'events-relay-3']
    .map((n) => `"127.0.0.1:${relay(n).metricsPort}"`)
    .join(', ');
  assert.match(config, new RegExp(`job_name: "events-relay"\\n.*\\n +- targets: \\[${targets}\\]`));
  assert.equal(config.match(/job_name: "events-relay/g)?.length, 1);
});

test('when HERALD_EVENTS_RELAYS is not a number from 1 to 8, then the stack refuses it', () => {
  for (const value of ['0', '9', 'two']) {
    const r = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "await import('./config.mjs')"],
      {
        cwd: path.dirname(new URL(import.meta.url).pathname),
        env: { ...process.env, HERALD_EVENTS_RELAYS: value },
        encoding: 'utf8',
      },
    );
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /HERALD_EVENTS_RELAYS=.* is not a number of relays \(1\.\.8\)/);
  }
});
