// The restore drill (docs/operations.md#restore-drill): on the running local stack, a base backup
// of PostgreSQL taken while Events are recorded, restored into a second server, must hold every
// Event answered 202 before the backup started, each exactly once, as the events service's own
// export reads them. Everything it starts (the second server, the events process) it stops, and
// its scratch folder it deletes, also when it fails or is interrupted; the stack's own processes
// it only reads from and records Events into, for a Tenant of its own.
import path from 'node:path';
import { createDrillLoad } from './load.mjs';
import { startRestoredServer, takeBaseBackup } from './restored-postgres.mjs';
import { exportContactEvents, startServiceOn } from './restored-events.mjs';
import { formatVerdict, judge } from './verdict.mjs';
import { inScratch } from './undo.mjs';

export { formatVerdict };

/**
 * @typedef {object} RestoreDrillResult
 * @property {import('./verdict.mjs').Verdict} verdict
 * @property {import('./restored-postgres.mjs').Backup} backup
 * @property {string} tenantId
 * @property {string} contactId
 * @property {number} recoverySeconds  from the restored server's start until it answered
 * @property {string[]} anomalies      answers the load did not expect
 */

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @typedef {import('./undo.mjs').Undo} Undo */

/**
 * The backup, taken `seconds` into the load; the load goes on `seconds` after it ends.
 * @param {Awaited<ReturnType<typeof createDrillLoad>>} load
 * @param {string} scratch
 * @param {number} seconds
 * @param {Undo} undo
 * @param {(line: string) => void} log
 */
async function backupUnderLoad(load, scratch, seconds, undo, log) {
  load.start();
  await sleep(seconds * 1000);
  log(`pg_basebackup -X stream (${load.ledger.acked.size} Events answered 202 so far)`);
  const backup = await takeBaseBackup(path.join(scratch, 'data'), undo);
  log(
    `backup: ${(backup.bytes / 2 ** 20).toFixed(0)} MiB in ${((backup.endedAt - backup.startedAt) / 1000).toFixed(1)} s (label: started ${backup.startTime}), WAL ${backup.startLsn} to ${backup.endLsn}, verified`,
  );
  await sleep(seconds * 1000);
  await load.stop();
  log(`load stopped: ${load.ledger.acked.size} Events answered 202 in all`);
  return backup;
}

/**
 * @param {object} [options]
 * @param {number} [options.seconds]  seconds of load before the backup starts, and again after
 *   it ends (default 4)
 * @param {(line: string) => void} [options.log]
 * @returns {Promise<RestoreDrillResult>}
 */
export async function runRestoreDrill({ seconds = 4, log = () => {} } = {}) {
  return inScratch('restore', log, async (scratch, undo) => {
    const load = await createDrillLoad();
    undo.push(() => load.stop());
    log(`Tenant ${load.tenantId}, Contact ${load.contactId}: recording Events through the ingress`);
    const backup = await backupUnderLoad(load, scratch, seconds, undo, log);

    const t0 = Date.now();
    const server = await startRestoredServer(backup.dir, path.join(scratch, 'postgres.log'), undo);
    const recoverySeconds = (Date.now() - t0) / 1000;
    log(
      `restored PostgreSQL on port ${server.port}, answering after ${recoverySeconds.toFixed(1)} s`,
    );
    const eventsUrl = await startServiceOn(
      {
        databaseUrl: server.databaseUrl('herald_events'),
        logFile: path.join(scratch, 'events.log'),
        pidFile: path.join(scratch, 'events.pid'),
      },
      undo,
    );
    log(`events service on the restored database at ${eventsUrl}: exporting the Contact`);
    const exported = await exportContactEvents(eventsUrl, load.tenantId, load.contactId);
    return {
      verdict: judge({ acked: load.ledger.acked, names: load.names }, backup, exported),
      backup,
      tenantId: load.tenantId,
      contactId: load.contactId,
      recoverySeconds,
      anomalies: load.anomalies,
    };
  });
}
