// How the events benchmark takes one measurement: the floor from a pg Pool, the service through
// wrk or the SDK's tracker, each with the CPU of every process read around it, and the
// restarts of the services that turn production's tracing on and off.
import fs from 'node:fs';
import path from 'node:path';
import { up } from '@herald/stack/index.mjs';
import { closedLoop } from './lib.mjs';
import { EVENT_NAME, PROPERTIES, TOKEN_REFRESH_MS } from './events-measurements.mjs';
import { floorDatabase, insertStatement } from './events-setup.mjs';
import { cpuPerRequest, cpuReading, servicesNode, stackPids } from './procstat.mjs';
import { readPublished, relayShares } from './relays.mjs';
import { startSdkTracker } from './sdk-tracker.mjs';
import { runWrk, writeConfig } from './wrk.mjs';

/**
 * One run's state, which its steps share. `pids` is read again before every measurement (a
 * service restarted by someone else has a new pid); `counts` add up what the measurements
 * accepted, and how many more Events requests still in flight may have recorded.
 * @typedef {object} EventsRun
 * @property {typeof import('pg').default} pg
 * @property {() => string} timeOrderedUuid
 * @property {string} ingressUrl
 * @property {string} repoRoot
 * @property {number} seconds
 * @property {number} warmup
 * @property {number} connections
 * @property {string} runId
 * @property {string} workDir the measurements' config files
 * @property {string | null} wrk wrk's path, when a measurement needs it
 * @property {import('./events-setup.mjs').BenchTenant} tenant
 * @property {string} host the ingress's, as requests.lua sends it
 * @property {string} occurredAt of every Event wrk sends
 * @property {Record<string, number>} pids
 * @property {ReturnType<typeof import('./procstat.mjs').memoryTracker>} memory
 * @property {ReturnType<typeof import('./lag.mjs').outboxSampler>} outbox
 * @property {{ database: import('./events-setup.mjs').FloorDatabase | null,
 *   pool: import('pg').Pool | null, key: number }} floor
 * @property {{ accepted: number, inFlightBound: number }} counts
 */
/**
 * A measurement's figures: what every driver returns, and what only wrk's or the SDK's do.
 * @typedef {object} Figures
 * @property {number} seconds
 * @property {number} requests
 * @property {number} ok
 * @property {number} failed
 * @property {number} requestsPerSecond
 * @property {number} eventsPerSecond
 * @property {number} p50
 * @property {number} p99
 * @property {Record<string, number | null>} cpuMsPerRequest
 * @property {{ from: number, to: number }} window
 * @property {number} [acceptedEvents]
 * @property {Record<string, number>} [statuses]
 * @property {Record<string, number>} [socketErrors]
 * @property {{ trackers: number, flushAt: number, tracked: number, failedEvents: number,
 *   errors: string[], ownCpuMs: number }} [sdk]
 * @property {ReturnType<typeof relayShares>} [relayShares] each relay's messages published
 *   during the measurement, when it records Events
 */

/**
 * Measures `m`, restarting the services around it when it asks for them traced or freshly
 * started.
 * @param {EventsRun} run
 * @param {import('./events-measurements.mjs').Measurement} m
 * @returns {Promise<Figures>}
 */
export async function measure(run, m) {
  if (m.traced) await tracing(productionTraceRatio(run.repoRoot));
  else if (m.restart) await tracing(null, ' (services restarted)');
  try {
    return m.group === 'floor'
      ? await floorMeasurement(run, m)
      : m.driver === 'sdk'
        ? await sdkMeasurement(run, m)
        : await wrkMeasurement(run, m);
  } finally {
    if (m.traced) await tracing(null);
  }
}

/**
 * CPU readings around `measureFigures()`, which resolves to its figures with `requests`; `extra`
 * names more processes to read (the SDK tracker's), alive at both readings. `publishing`: the
 * measurement records Events, and each relay's published count is read around it too (outside
 * the CPU readings: its metrics page costs the relay a query).
 * @template {{ requests: number }} F
 * @param {EventsRun} run
 * @param {() => Promise<F>} measureFigures
 * @param {Record<string, number>} [extra]
 * @param {boolean} [publishing]
 */
async function withCpu(run, measureFigures, extra = {}, publishing = false) {
  run.pids = await stackPids(); // a service restarted by someone else has a new pid
  // Memory between measurements, not during them: reading it costs CPU.
  run.memory.sample(run.pids);
  const published = publishing ? await readPublished() : null;
  const measured = { ...run.pids, ...extra };
  const before = cpuReading(measured);
  const from = Date.now();
  const figures = await measureFigures();
  const after = cpuReading(measured);
  await run.outbox.sampleNow();
  const to = Date.now();
  const cpu = cpuPerRequest(before, after, figures.requests);
  const shares = published ? { relayShares: relayShares(published, await readPublished()) } : {};
  return { ...figures, cpuMsPerRequest: cpu, window: { from, to }, ...shares };
}

/**
 * The floor: bare INSERTs of `m.rows` rows each into the scratch database, made on first use.
 * @param {EventsRun} run
 * @param {import('./events-measurements.mjs').Measurement} m
 */
async function floorMeasurement(run, m) {
  const { floor, seconds, connections } = run;
  if (!floor.pool) {
    floor.database = await floorDatabase(run.pg, run.repoRoot, run.runId);
    floor.pool = new run.pg.Pool({ connectionString: floor.database.url, max: connections });
    // An idle client's error (PostgreSQL restarted by someone else) must not end the run.
    floor.pool.on('error', () => {});
  }
  const { pool } = floor;
  const request = async () => {
    await pool.query(
      insertStatement(
        run.tenant.tenantId,
        run.tenant.contacts,
        m.rows,
        () => `floor-${run.runId}-${(floor.key += 1)}`,
        run.timeOrderedUuid,
      ),
    );
    return true;
  };
  await closedLoop({ request, concurrency: connections, seconds: run.warmup, warmupSeconds: 0 });
  return withCpu(run, async () => {
    const r = await closedLoop({ request, concurrency: connections, seconds, warmupSeconds: 0 });
    return {
      seconds,
      requests: r.count,
      ok: r.count - r.unexpected,
      failed: r.unexpected,
      requestsPerSecond: (r.count - r.unexpected) / seconds,
      eventsPerSecond: ((r.count - r.unexpected) * m.rows) / seconds,
      p50: r.p50,
      p99: r.p99,
    };
  });
}

/**
 * Drops the floor's scratch database, if one was made.
 * @param {EventsRun['floor']} floor
 */
export async function closeFloor(floor) {
  await floor.pool?.end();
  await floor.database?.drop();
  floor.pool = null;
  floor.database = null;
}

/**
 * wrk through the ingress with requests.lua, warmed up first.
 * @param {EventsRun} run
 * @param {import('./events-measurements.mjs').Measurement} m
 */
async function wrkMeasurement(run, m) {
  const { tenant, connections, counts } = run;
  if (Date.now() - tenant.tokens.at > TOKEN_REFRESH_MS) await tenant.tokens.refresh();
  const config = writeConfig(path.join(run.workDir, `${m.name}.lua`), {
    kind: m.kind,
    route: m.route,
    events: m.events,
    host: run.host,
    tokens: tenant.tokens.list,
    contacts: tenant.contacts,
    organizations: tenant.organizations,
    eventName: EVENT_NAME,
    occurredAt: run.occurredAt,
    properties: JSON.stringify(PROPERTIES),
  });
  const common = { wrk: run.wrk, url: run.ingressUrl, connections, config };
  const warm = await runWrk({
    ...common,
    seconds: run.warmup,
    tag: `${run.runId}.${m.name}-warmup`,
  });
  counts.accepted += warm.acceptedEvents;
  counts.inFlightBound += 2 * connections * m.events;
  return withCpu(
    run,
    async () => {
      const r = await runWrk({ ...common, seconds: run.seconds, tag: `${run.runId}.${m.name}` });
      counts.accepted += r.acceptedEvents;
      const { text, ...figures } = r;
      return {
        ...figures,
        eventsPerSecond: r.acceptedEvents / r.seconds,
        warmup: { requests: warm.requests, failed: warm.failed, statuses: warm.statuses },
        wrkOutput: text,
      };
    },
    {},
    m.kind === 'events',
  );
}

/**
 * @herald/client's batching tracker in its own Node process (sdk-tracker.mjs), one tracker
 * per connection over the same keys and Contacts as wrk, warmed up like wrk, then measured:
 * `seconds` of track() and the close() that sends what is queued. Its CPU is the `sdk` column.
 * @param {EventsRun} run
 * @param {import('./events-measurements.mjs').Measurement} m
 */
async function sdkMeasurement(run, m) {
  const { tenant, connections, counts } = run;
  const configFile = path.join(run.workDir, `${m.name}.json`);
  fs.mkdirSync(run.workDir, { recursive: true });
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      ingressUrl: run.ingressUrl,
      keys: tenant.keys.map(({ clientId, secret }) => ({ clientId, secret })),
      contactIds: tenant.contacts.map((c) => c.id),
      trackers: connections,
      flushAt: m.events,
      seconds: run.seconds,
      warmup: run.warmup,
      runId: run.runId,
      name: m.name,
      eventName: EVENT_NAME,
      properties: PROPERTIES,
    }),
  );
  const sdk = await startSdkTracker(configFile);
  // Every Event the tracker reported recorded counts as accepted; one it gave up on may have
  // been recorded all the same (an answer lost after the commit).
  counts.accepted += sdk.warm.accepted;
  counts.inFlightBound += sdk.warm.failedEvents;
  try {
    return await withCpu(
      run,
      async () => {
        const r = await sdk.measure();
        counts.accepted += r.accepted;
        counts.inFlightBound += r.failedEvents;
        return sdkFigures(r, sdk.warm, { trackers: connections, flushAt: m.events });
      },
      { sdk: sdk.pid },
      true,
    );
  } finally {
    await sdk.stop();
  }
}

/**
 * The figures of the SDK tracker's measurement, from what its process reported (SDK_RESULT)
 * and its warm-up's (SDK_READY).
 * @param {import('./sdk-tracker.mjs').SdkFigures} r
 * @param {import('./sdk-tracker.mjs').SdkFigures} warm
 * @param {{ trackers: number, flushAt: number }} setting
 */
function sdkFigures(r, warm, { trackers, flushAt }) {
  return {
    seconds: r.seconds,
    requests: r.requests,
    ok: r.ok,
    failed: r.requests - r.ok,
    statuses: r.statuses,
    socketErrors: { network: r.networkErrors },
    acceptedEvents: r.accepted,
    requestsPerSecond: r.ok / r.seconds,
    eventsPerSecond: r.accepted / r.seconds,
    p50: r.p50,
    p99: r.p99,
    mean: r.mean,
    sdk: {
      trackers,
      flushAt,
      tracked: r.tracked,
      failedEvents: r.failedEvents,
      errors: r.errors,
      ownCpuMs: r.ownCpuMs,
    },
    warmup: {
      requests: warm.requests,
      failed: warm.requests - warm.ok,
      statuses: warm.statuses,
      failedEvents: warm.failedEvents,
    },
  };
}

/**
 * The chart's share of new traces kept in production (`telemetry.traceSampleRatio`).
 * @param {string} repoRoot
 */
function productionTraceRatio(repoRoot) {
  const values = fs.readFileSync(path.join(repoRoot, 'charts', 'herald', 'values.yaml'), 'utf8');
  const match = /^ {2}traceSampleRatio: *([0-9.]+) *$/m.exec(values);
  if (!match) throw new Error('charts/herald/values.yaml sets no telemetry.traceSampleRatio');
  return Number(match[1]);
}

/**
 * Restarts the services sampling `ratio` of the traces they begin (OTEL_TRACES_SAMPLER_ARG,
 * which wins over the stack's default of none), or as the stack has them with null; `said` is
 * what the progress line shows instead of the ratio.
 * @param {number | null} ratio
 * @param {string} [said]
 */
async function tracing(ratio, said) {
  if (ratio === null) delete process.env.OTEL_TRACES_SAMPLER_ARG;
  else process.env.OTEL_TRACES_SAMPLER_ARG = String(ratio);
  process.stdout.write(
    said ?? (ratio === null ? ' (tracing back to the stack default)' : ` (tracing ${ratio})`),
  );
  // With the node they run, which need not be the one running this benchmark.
  const node = (await servicesNode()) ?? undefined;
  await up({ build: false, quiet: true, restartServices: true, node });
}
