// The disk-full drill (docs/reliability.md#a-full-disk): a PostgreSQL of its own on a small
// tmpfs, with the events service and an events relay running on it as the stack runs them (the
// stack's Redis, Kafka, contacts and auth behind them). Events are recorded until the filesystem
// is full, then space is freed. Recording must answer 503 while the disk is full (never a 500,
// never past the client's timeout), every Event answered 202 must be stored once, recording must
// come back without restarting Herald's processes, and the relay must publish the backlog.
// Everything it starts it stops, and its mount and scratch folder it removes. Root only (mount).
import path from 'node:path';
import {
  checkStored,
  createLoad,
  drillContact,
  fillLeaving,
  mountSmallDisk,
  sleep,
  startEventsOnOwnDatabase,
} from './small-disk.mjs';
import { inScratch } from './undo.mjs';

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
 * @param {{ sizeMb?: number, log?: (line: string) => void }} [options]  `sizeMb`: the tmpfs
 * @returns {Promise<DiskFullResult>}
 */
export async function runDiskFullDrill({ sizeMb = 160, log = () => {} } = {}) {
  return inScratch('disk-full', log, async (scratch, undo) => {
    const mount = await mountSmallDisk(scratch, sizeMb, undo);
    // Small WAL, so that the data files and the WAL both meet the full disk.
    const drill = await startEventsOnOwnDatabase(scratch, path.join(mount, 'data'), undo, {
      settings: ['max_wal_size = 48MB', 'min_wal_size = 32MB'],
    });
    log(`PostgreSQL on a ${sizeMb} MiB tmpfs (port ${drill.port}); events at ${drill.eventsUrl}`);
    const who = await drillContact('disk-full');

    // Ballast: all but 12 MiB of the filesystem, freed once recording has stopped.
    const freeSpace = fillLeaving(mount, 12);
    const load = createLoad(drill.eventsUrl, who);
    undo.push(() => load.stop());
    await untilFull(load);
    log(
      `disk full: ${load.acked.size} Events answered 202; answers ${JSON.stringify(load.statuses)}`,
    );

    freeSpace();
    const freedAt = Date.now();
    await sleep(2_000);
    const postgresUp = await drill.db.query('select 1').then(
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

    const { missing, doubled, outboxLeft } = await checkStored(drill.db, who.tenantId, load.acked);
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
    return {
      statuses: s,
      acked: load.acked.size,
      missing,
      doubled,
      recoverySeconds,
      postgresRestarted: !postgresUp,
      outboxLeft,
      ok,
    };
  });
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
