// `npm run drill -- <drill>`: drills that prove an operations procedure on the running local
// stack (docs/operations.md). Brings the stack up when it is not, and then stops what it started.
import { UsageError, commandLine, positiveInteger } from '@herald/stack/args.mjs';
import { down, ingressUrl, isUp, up } from '@herald/stack/index.mjs';
import { formatVerdict, runRestoreDrill } from './restore.mjs';
import { formatDiskFull, runDiskFullDrill } from './disk-full.mjs';
import { formatKafkaDiskFull, runKafkaDiskFullDrill } from './kafka-disk-full.mjs';

const DRILLS = ['restore', 'disk-full', 'kafka-disk-full'];

const USAGE = `Usage: npm run drill -- restore [--seconds N] [--no-build]
       npm run drill -- disk-full [--no-build]
       npm run drill -- kafka-disk-full [--no-build]

restore: records Events for a fresh Tenant's Contact through the ingress while pg_basebackup
(-X stream) copies the stack's PostgreSQL into <data dir>/drills/, starts a second PostgreSQL on
the copy and the events service on its herald_events, and reads the Contact's export there.
Every Event answered 202 before the backup started must be in it once; none may be in it twice.
Prints the counts, deletes the copy, and exits 1 when an Event is missing or doubled, or when
none was answered before the backup started.

disk-full (as root): a PostgreSQL of its own on a 160 MiB tmpfs, with the events service and a
relay on it, records Events until the filesystem is full, then frees it. Recording must answer
503 meanwhile (no 500, no hang), every Event answered 202 must be stored once, recording must come
back without restarting a service, and the relay must publish the backlog.

kafka-disk-full (as root): a Kafka node of its own with its log directory on a 96 MiB tmpfs, and
the events service and a relay on a PostgreSQL of the drill's own, the relay publishing to that
node. Records Events until Kafka's disk is full, and 5 s more; then frees space and starts Kafka
again if it stopped. Recording must answer 202 throughout, every Event answered 202 must be stored
once and reach Kafka, and the relay must publish the backlog without a restart; copies on Kafka
beyond the first are counted.

  --seconds N     seconds of load before the backup starts, and again after it ends (default 4)
  --no-build      do not build before starting the stack
  -h, --help      this text

The stack's own processes keep running; the drill stops the server and the process it started.`;

const { values, positionals } = commandLine(USAGE, {
  options: {
    seconds: { type: 'string', default: '4' },
    'no-build': { type: 'boolean', default: false },
  },
  allowPositionals: true,
  check({ values, positionals }) {
    positiveInteger('seconds', values.seconds);
    if (positionals.length !== 1 || !DRILLS.includes(positionals[0])) {
      throw new UsageError(
        positionals.length === 0
          ? `name a drill: ${DRILLS.join(', ')}`
          : `unknown drill ${positionals.join(' ')}; choose from: ${DRILLS.join(', ')}`,
      );
    }
  },
});

const log = (/** @type {string} */ line) =>
  console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);

// A stack that is up is left as it is: up() would rebuild, and restart services older than
// their build, under the feet of everyone else using it.
const { started } = (await isUp())
  ? { started: [] }
  : await up({ build: !values['no-build'], quiet: true });
log(`${positionals[0]} drill against ${ingressUrl}`);
let ok = false;
try {
  if (positionals[0] === 'disk-full') {
    const result = await runDiskFullDrill({ log });
    console.log(`\n${formatDiskFull(result)}`);
    ok = result.ok;
  } else if (positionals[0] === 'kafka-disk-full') {
    const result = await runKafkaDiskFullDrill({ log });
    console.log(`\n${formatKafkaDiskFull(result)}`);
    ok = result.ok;
  } else {
    const result = await runRestoreDrill({ seconds: Number(values.seconds), log });
    if (result.anomalies.length > 0) log(`unexpected answers: ${result.anomalies.join('; ')}`);
    console.log(`\n${formatVerdict(result.verdict)}`);
    ok = result.verdict.ok;
  }
} catch (err) {
  console.error(
    `\n${positionals[0]} drill: could not be carried out: ${err instanceof Error ? err.stack : err}`,
  );
} finally {
  if (started.length > 0) await down({ only: started, quiet: true });
}
process.exit(ok ? 0 : 1);
