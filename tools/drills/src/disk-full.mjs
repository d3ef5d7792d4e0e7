// The disk-full drill (docs/reliability.md#a-full-disk): a PostgreSQL of its own on a small
// tmpfs, with the events service and an events relay running on it as the stack runs them (the
// stack's Redis, Kafka, contacts and auth behind them). Events are recorded until the filesystem
// is full, then space is freed. Recording must answer 503 while the disk is full (never a 500,
// never past the client's timeout), every Event answered 202 must be stored once, recording must
// come back without restarting Herald's processes, and the relay must publish the backlog.
// Everything it starts it stops, and its mount and scratch folder it removes. Root only (mount).
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { newTenant, request } from '@herald/chaos/api.mjs';
import { dataDir, findService } from '@herald/stack/config.mjs';
import { isRoot, run } from '@herald/stack/processes.mjs';
import { serviceEnv } from '@herald/stack/service-runner.mjs';
import { startRestoredEvents } from './restored-events.mjs';
import {
  createDatabase,
  initCluster,
  makeScratch,
  startRestoredServer,
} from './restored-postgres.mjs';
import { createUndo, undoOnSignal } from './undo.mjs';

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Free bytes left on the filesystem of `dir`. @param {string} dir */
const freeBytes = (dir) => {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
};

/**
 * @typedef {object} DiskFullResult
 * @property {Record<string, number>} statuses  every answer while the disk filled, by status
 *   (`timeout` for none within the attempt timeout)
 * @property {number} acked       Events answered 202
 * @property {number} missing     of those, not in the database
 * @property {number} doubled     of those, in it more than once
 * @property {number} recoverySeconds  from freeing the space until an Event was answered 202
 * @property {boolean} postgresRestarted  PostgreSQL stopped on the full disk and was started again
 * @property {number} outboxLeft  messages still unpublished at the end
 * @property {boolean} ok
 */

/** Events per request: arrays fill the disk in few requests, well inside the rate budget. */
const EVENTS_PER_REQUEST = 50;

/**
 * Sends arrays of Events, each Event with its own dedupKey, in `lanes` until `stop()` says so;
 * notes every answer. The Events of a request answered 202 are in `acked`. A 429 is waited out
 * as its Retry-After says and is not taken for the state of the disk.
 * @param {string} url  the events service
 * @param {{ token: string, contactId: string }} who
 */
function createLoad(url, who, lanes = 4) {
  /** @type {Set<string>} */
  const acked = new Set();
  /** @type {Record<string, number>} */
  const statuses = {};
  let running = true;
  let last = { status: '', at: 0 };
  const lane = async () => {
    while (running) {
      const body = Array.from({ length: EVENTS_PER_REQUEST }, () => ({
        contactId: who.contactId,
        eventName: 'Disk Filled',
        occurredAt: new Date().toISOString(),
        dedupKey: randomUUID(),
        // A few KiB an Event, so that the disk fills in seconds rather than minutes.
        properties: { padding: 'x'.repeat(4096) },
      }));
      let status;
      let retryAfterS = 0;
      try {
        const res = await fetch(`${url}/v1/events/by-contact-id`, {
          method: 'POST',
          headers: { authorization: `Bearer ${who.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        status = String(res.status);
        retryAfterS = Number(res.headers.get('retry-after') ?? 0);
      } catch (err) {
        status = /** @type {Error} */ (err).name === 'TimeoutError' ? 'timeout' : 'network';
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status === '202') for (const e of body) acked.add(e.dedupKey);
      if (status === '429') {
        await sleep(Math.max(1, retryAfterS) * 1000);
        continue;
      }
      last = { status, at: Date.now() };
      if (status !== '202') await sleep(100);
    }
  };
  const done = Promise.all(Array.from({ length: lanes }, lane));
  return {
    acked,
    statuses,
    last: () => last,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/**
 * PostgreSQL on a `sizeMb` tmpfs in `scratch`, with herald_events migrated, and the events
 * service and a relay running on it.
 * @param {string} scratch
 * @param {number} sizeMb
 * @param {import('./undo.mjs').Undo} undo
 */
async function startOnSmallDisk(scratch, sizeMb, undo) {
  const mount = path.join(scratch, 'fs');
  fs.mkdirSync(mount);
  await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'herald-disk-full', mount]);
  undo.push(() => run('umount', ['-l', mount], { check: false }));
  makeScratch(mount);
  const dataFolder = path.join(mount, 'data');
  // Small WAL, so that the data files and the WAL both meet the full disk.
  await initCluster(dataFolder, ['max_wal_size = 48MB', 'min_wal_size = 32MB']);
  const logFile = path.join(scratch, 'postgres.log');
  const server = await startRestoredServer(dataFolder, logFile, undo);
  await createDatabase(server.port, 'herald_events');
  const databaseUrl = server.databaseUrl('herald_events');
  const events = findService('events');
  await run(process.execPath, [events.migratePath], {
    env: { ...serviceEnv('events'), DATABASE_URL: databaseUrl },
    cwd: path.dirname(events.migratePath),
    timeoutMs: 120_000,
  });
  const start = (/** @type {string} */ name) =>
    startRestoredEvents(
      {
        name,
        databaseUrl,
        logFile: path.join(scratch, `${name}.log`),
        pidFile: path.join(scratch, `${name}.pid`),
      },
      undo,
    );
  const eventsUrl = await start('events');
  await start('events-relay');
  /** Starts PostgreSQL again on its port, as a supervisor would after it stopped. */
  const restartPostgres = () => startRestoredServer(dataFolder, logFile, undo, server.port);
  return { mount, port: server.port, databaseUrl, eventsUrl, restartPostgres };
}

/**
 * Until recording has failed for 5 s on end (the disk is full), at most 90 s.
 * @param {ReturnType<typeof createLoad>} load
 */
async function untilFull(load) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    await sleep(250);
    if (load.acked.size === 0 || ['202', ''].includes(load.last().status)) continue;
    const since = Date.now();
    while (Date.now() - since < 5_000 && load.last().status !== '202') await sleep(250);
    if (load.last().status !== '202') return;
  }
}

/**
 * Every Event answered 202 stored once; the outbox drained by the relay (within 60 s).
 * @param {pg.Pool} db
 * @param {string} tenantId
 * @param {Set<string>} acked
 */
async function checkStored(db, tenantId, acked) {
  const { rows } = await db.query(
    'select dedup_key, count(*)::int as n from events where tenant_id = $1 group by dedup_key',
    [tenantId],
  );
  const stored = new Map(rows.map((r) => [r.dedup_key, r.n]));
  const missing = [...acked].filter((k) => !stored.has(k)).length;
  const doubled = [...stored.values()].filter((n) => n > 1).length;
  let outboxLeft = -1;
  for (const until = Date.now() + 60_000; Date.now() < until; await sleep(500)) {
    outboxLeft = (await db.query('select count(*)::int as n from outbox')).rows[0].n;
    if (outboxLeft === 0) break;
  }
  return { missing, doubled, outboxLeft };
}

/**
 * @param {{ sizeMb?: number, log?: (line: string) => void }} [options]  `sizeMb`: the tmpfs
 * @returns {Promise<DiskFullResult>}
 */
export async function runDiskFullDrill({ sizeMb = 160, log = () => {} } = {}) {
  if (!isRoot) throw new Error('the disk-full drill mounts a tmpfs: run it as root');
  const drills = path.join(dataDir, 'drills');
  const scratch = path.join(drills, `disk-full-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const undo = createUndo(log);
  const removeHandlers = undoOnSignal(undo, log);
  /** @type {pg.Pool | undefined} */
  let db;
  try {
    undo.push(() => fs.rmSync(scratch, { recursive: true, force: true }));
    fs.mkdirSync(drills, { recursive: true, mode: 0o755 });
    makeScratch(scratch);
    const drill = await startOnSmallDisk(scratch, sizeMb, undo);
    log(`PostgreSQL on a ${sizeMb} MiB tmpfs (port ${drill.port}); events at ${drill.eventsUrl}`);
    const tenant = await newTenant(`disk-full-drill-${new Date().toISOString()}`);
    const externalId = `drill-${randomUUID()}`;
    const contact = await request('PUT', `/v1/contacts/${externalId}`, {
      token: tenant.token,
      body: { email: `${externalId}@example.com` },
    });
    if (contact.status !== 201) throw new Error(`the Contact was answered ${contact.status}`);
    db = new pg.Pool({ connectionString: drill.databaseUrl, max: 2 });
    db.on('error', () => {});

    // Ballast: all but 12 MiB of the filesystem, freed once recording has stopped.
    const ballast = path.join(drill.mount, 'ballast');
    fs.writeFileSync(ballast, Buffer.alloc(Math.max(0, freeBytes(drill.mount) - 12 * 2 ** 20)));
    const load = createLoad(drill.eventsUrl, { token: tenant.token, contactId: contact.body.id });
    await untilFull(load);
    log(
      `disk full: ${load.acked.size} Events answered 202; answers ${JSON.stringify(load.statuses)}`,
    );

    fs.rmSync(ballast);
    const freedAt = Date.now();
    await sleep(2_000);
    const postgresUp = await db.query('select 1').then(
      () => true,
      () => false,
    );
    if (!postgresUp) {
      log('PostgreSQL stopped on the full disk: starting it again, as its supervisor would');
      await drill.restartPostgres();
    }
    // Recording resumes with the same Herald processes.
    while (load.last().status !== '202' && Date.now() - freedAt < 60_000) await sleep(250);
    const recoverySeconds = (Date.now() - freedAt) / 1000;
    await sleep(1_000);
    await load.stop();
    log(`recording again ${recoverySeconds.toFixed(1)} s after the space was freed`);

    const { missing, doubled, outboxLeft } = await checkStored(db, tenant.tenantId, load.acked);
    const s = load.statuses;
    const ok =
      load.acked.size > 0 &&
      (s['503'] ?? 0) > 0 &&
      !s['500'] &&
      !s.timeout &&
      missing === 0 &&
      doubled === 0 &&
      outboxLeft === 0 &&
      recoverySeconds < 60;
    const postgresRestarted = !postgresUp;
    return {
      statuses: s,
      acked: load.acked.size,
      missing,
      doubled,
      recoverySeconds,
      postgresRestarted,
      outboxLeft,
      ok,
    };
  } finally {
    await db?.end().catch(() => {});
    await undo.run();
    removeHandlers();
  }
}

/**
 * The drill's result as lines for a person.
 * @param {DiskFullResult} r
 */
export function formatDiskFull(r) {
  const answers = Object.entries(r.statuses)
    .map(([status, n]) => `${status}×${n}`)
    .join(' ');
  return [
    `answers while the disk filled and after: ${answers}`,
    `answered 202: ${r.acked}; missing ${r.missing}, doubled ${r.doubled}`,
    `recording again ${r.recoverySeconds.toFixed(1)} s after the space was freed` +
      (r.postgresRestarted ? ' (PostgreSQL had stopped and was started again)' : ''),
    `outbox left unpublished: ${r.outboxLeft}`,
    `disk-full drill: ${r.ok ? 'PASS' : 'FAIL'}`,
  ].join('\n');
}
