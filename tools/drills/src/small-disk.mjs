// What the disk-full drills share: a small tmpfs made for the drill and filled with ballast, a
// load of large Events in arrays, and the check that every Event answered 202 is stored once and
// was published. Root only (mount).
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { newTenant, request } from '@herald/chaos/api.mjs';
import { findService } from '@herald/stack/config.mjs';
import { isRoot, run } from '@herald/stack/processes.mjs';
import { serviceEnv } from '@herald/stack/service-runner.mjs';
import { startServiceOn } from './restored-events.mjs';
import {
  createDatabase,
  initCluster,
  makeScratch,
  startRestoredServer,
} from './restored-postgres.mjs';

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Free bytes left on the filesystem of `dir`. @param {string} dir */
const freeBytes = (dir) => {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
};

/**
 * A `sizeMb` tmpfs mounted on `<scratch>/fs` (owned by PostgreSQL's OS user); unmounted by `undo`.
 * @param {string} scratch
 * @param {number} sizeMb
 * @param {import('./undo.mjs').Undo} undo
 */
export async function mountSmallDisk(scratch, sizeMb, undo) {
  if (!isRoot) throw new Error('a disk-full drill mounts a tmpfs: run it as root');
  const mount = path.join(scratch, 'fs');
  fs.mkdirSync(mount);
  await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'herald-disk-full', mount]);
  undo.push(() => run('umount', ['-l', mount], { check: false }));
  makeScratch(mount);
  return mount;
}

/**
 * Fills the filesystem of `mount` with a ballast file until `leaveMb` MiB are left; returns
 * what deletes it.
 * @param {string} mount
 * @param {number} leaveMb
 */
export function fillLeaving(mount, leaveMb) {
  const ballast = path.join(mount, 'ballast');
  fs.writeFileSync(ballast, Buffer.alloc(Math.max(0, freeBytes(mount) - leaveMb * 2 ** 20)));
  return () => fs.rmSync(ballast);
}

/** Events per request: arrays fill the disk in few requests, well inside the rate budget. */
const EVENTS_PER_REQUEST = 50;

/**
 * Sends arrays of Events, each Event with its own dedupKey, in `lanes` until `stop()` says so;
 * notes every answer. The Events of a request answered 202 are in `acked`. A 429 is waited out
 * as its Retry-After says and is not taken for the state of the disk.
 * @param {string} url  the events service
 * @param {{ token: string, contactId: string }} who
 * @param {{ lanes?: number, pauseMs?: number }} [options]  `pauseMs`: a lane's wait after each
 *   answer, which bounds the load at `lanes` × 50 Events per `pauseMs`
 */
export function createLoad(url, who, { lanes = 4, pauseMs = 0 } = {}) {
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
      else if (pauseMs > 0) await sleep(pauseMs);
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
 * A PostgreSQL of the drill's own with its data in `dataFolder` (its `settings` appended to its
 * postgresql.conf), `herald_events` migrated on it, and the events service and a relay running on
 * it; `env` goes to the migration and to the relay (a Kafka of the drill's own). The rest of the
 * stack (Redis, Kafka, contacts, auth) is the stack's.
 * @param {string} scratch
 * @param {string} dataFolder
 * @param {import('./undo.mjs').Undo} undo
 * @param {{ settings?: string[], env?: Record<string, string> }} [options]
 */
export async function startEventsOnOwnDatabase(scratch, dataFolder, undo, options = {}) {
  const { settings = [], env = {} } = options;
  await initCluster(dataFolder, settings);
  const logFile = path.join(scratch, 'postgres.log');
  const server = await startRestoredServer(dataFolder, logFile, undo);
  await createDatabase(server.port, 'herald_events');
  const databaseUrl = server.databaseUrl('herald_events');
  const events = findService('events');
  await run(process.execPath, [events.migratePath], {
    env: { ...serviceEnv('events'), DATABASE_URL: databaseUrl, ...env },
    cwd: path.dirname(events.migratePath),
    timeoutMs: 120_000,
  });
  const start = (/** @type {string} */ name, /** @type {Record<string, string>} */ extra) =>
    startServiceOn(
      {
        name,
        databaseUrl,
        env: extra,
        logFile: path.join(scratch, `${name}.log`),
        pidFile: path.join(scratch, `${name}.pid`),
      },
      undo,
    );
  const eventsUrl = await start('events', {});
  await start('events-relay', env);
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  db.on('error', () => {});
  undo.push(() => db.end());
  return {
    port: server.port,
    eventsUrl,
    db,
    /** Starts PostgreSQL again on its port, as a supervisor would after it stopped. */
    restartPostgres: () => startRestoredServer(dataFolder, logFile, undo, server.port),
  };
}

/**
 * A fresh Tenant of the stack's and a Contact of it, for the drill's Events.
 * @param {string} name
 */
export async function drillContact(name) {
  const tenant = await newTenant(`${name}-drill-${new Date().toISOString()}`);
  const externalId = `drill-${randomUUID()}`;
  const contact = await request('PUT', `/v1/contacts/${externalId}`, {
    token: tenant.token,
    body: { email: `${externalId}@example.com` },
  });
  if (contact.status !== 201) throw new Error(`the Contact was answered ${contact.status}`);
  return { tenantId: tenant.tenantId, token: tenant.token, contactId: contact.body.id };
}

/**
 * Every Event answered 202 stored once; the outbox drained by the relay (within `drainMs`).
 * @param {pg.Pool} db
 * @param {string} tenantId
 * @param {Set<string>} acked
 */
export async function checkStored(db, tenantId, acked, drainMs = 60_000) {
  const { rows } = await db.query(
    'select dedup_key, count(*)::int as n from events where tenant_id = $1 group by dedup_key',
    [tenantId],
  );
  const stored = new Map(rows.map((r) => [r.dedup_key, r.n]));
  const missing = [...acked].filter((k) => !stored.has(k)).length;
  const doubled = [...stored.values()].filter((n) => n > 1).length;
  let outboxLeft = -1;
  for (const until = Date.now() + drainMs; Date.now() < until; await sleep(500)) {
    outboxLeft = (await db.query('select count(*)::int as n from outbox')).rows[0].n;
    if (outboxLeft === 0) break;
  }
  return { missing, doubled, outboxLeft };
}
