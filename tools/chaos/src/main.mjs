// `npm run chaos`: the fault suite. Each fault, one at a time, hits the local stack while a
// steady load of Contact upserts and Events runs; after recovery an oracle reads PostgreSQL and
// Kafka and counts lost, doubled and duplicated Events (docs/reliability.md). `--soak` and
// `--fuzz` run the long checks instead: the soak (soak.mjs) and the contract fuzzer (tests/fuzz).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { UsageError, commandLine, positiveInteger } from '@herald/stack/args.mjs';
import { repoRoot } from '@herald/stack/config.mjs';
import { down, ingressUrl, up } from '@herald/stack/index.mjs';
import { runSoak } from './soak.mjs';
import {
  faultNames,
  formatTable,
  profiles,
  restoreStack,
  runFault,
  writeResults,
} from './suite.mjs';

/** The fault names, wrapped to the usage's indentation. */
function faultList(indent) {
  const lines = [''];
  for (const name of faultNames) {
    const last = lines.length - 1;
    const next = lines[last] ? `${lines[last]}, ${name}` : name;
    if (next.length > 78 - indent && lines[last]) {
      lines[last] += ',';
      lines.push(name);
    } else lines[last] = next;
  }
  return lines.join(`\n${' '.repeat(indent)}`);
}

const USAGE = `Usage: npm run chaos -- [--minutes N] [--only FAULT,...] [--rate N] [--lanes N]
                       [--no-build]
       npm run chaos -- --soak [--minutes N] [--no-build]
       npm run chaos -- --fuzz [--minutes N] [--no-build]

Runs each fault against the local stack (started when needed) while a steady load of Contact
upserts, single Events and arrays of up to 1,000 Events runs on all four Event routes, then
checks PostgreSQL and Kafka: no Event answered 202 may be lost or recorded twice, none answered
4xx may be anywhere. Two events relays run throughout, as in the chart: a second one is
started beside the stack's (unless HERALD_EVENTS_RELAYS gives it two) and stopped at the end.
Prints one table, writes the details to <data dir>/chaos/chaos-<time>.json and exits 1 when a
fault lost or doubled an Event, broke another guarantee of docs/reliability.md, or could not be
carried out.

  --minutes N     minutes of load per fault, the fault injected again every ~20 s of steady
                  load while time is left (default: one fault in about 15-25 s of load)
  --only LIST     run only these faults (comma-separated), in the order given:
                  ${faultList(18)}
  --rate N        new requests a second at most (default 8)
  --lanes N       requests in flight at most (default 4)
  --soak          instead of faults: steady load at half the measured capacity for --minutes
                  (default 30), sampling memory, V8 heap, open files, PostgreSQL connections,
                  outbox depth and age every 10 s; writes a CSV and a PNG under
                  <data dir>/chaos/ and exits 1 when a series keeps growing
  --fuzz          instead of faults: the contract fuzzer (npm run fuzz) for --minutes
                  (default 10)
  --no-build      do not build before starting the stack
  -h, --help      this text

It kills and restarts components of the stack it runs on: point it at a stack of your own
(HERALD_DATA_DIR and the HERALD_*_PORT variables, docs/local-stack.md) when others use the
default one.`;

const { values } = commandLine(USAGE, {
  options: {
    minutes: { type: 'string' },
    only: { type: 'string' },
    rate: { type: 'string', default: '8' },
    lanes: { type: 'string', default: '4' },
    soak: { type: 'boolean', default: false },
    fuzz: { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
  },
  check({ values }) {
    if (values.minutes !== undefined) positiveInteger('minutes', values.minutes);
    if (values.soak && values.fuzz) throw new UsageError('--soak and --fuzz are separate runs');
    if ((values.soak || values.fuzz) && values.only !== undefined) {
      throw new UsageError('--only chooses faults; it does not go with --soak or --fuzz');
    }
    positiveInteger('rate', values.rate);
    positiveInteger('lanes', values.lanes);
    if (values.only !== undefined) {
      const wanted = values.only.split(',').filter(Boolean);
      const bad = wanted.filter((f) => !faultNames.includes(f));
      if (wanted.length === 0 || bad.length > 0) {
        throw new UsageError(
          `unknown fault ${bad.join(', ') || '(none given)'} in --only; choose from: ${faultNames.join(', ')}`,
        );
      }
    }
  },
});

/** What `npm run fuzz` runs. */
const FUZZ_ENTRY = 'tests/fuzz/src/main.mjs';

const log = (line) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);

if (values.soak || values.fuzz) {
  const { started } = await up({ build: !values['no-build'], quiet: true });
  let ok;
  if (values.soak) {
    const minutes = values.minutes === undefined ? 30 : Number(values.minutes);
    log(`soak against ${ingressUrl} for ${minutes} min`);
    ({ ok } = await runSoak({ minutes, log }));
    log(ok ? 'soak: every series stayed flat' : 'soak: a series kept growing (FAIL above)');
  } else {
    const minutes = values.minutes === undefined ? 10 : Number(values.minutes);
    const fuzz = spawnSync(
      process.execPath,
      [path.join(repoRoot, FUZZ_ENTRY), '--seconds', String(minutes * 60)],
      { stdio: 'inherit' },
    );
    ok = fuzz.status === 0;
  }
  if (started.length > 0) await down({ only: started, quiet: true });
  process.exit(ok ? 0 : 1);
}

const selected = values.only ? values.only.split(',').filter(Boolean) : faultNames;
const profile =
  values.minutes === undefined ? profiles.short : profiles.minutes(Number(values.minutes));
// As `npm start`: what is not running starts, services older than their build restart.
const { started } = await up({ build: !values['no-build'], quiet: true });
const startedAt = Date.now();
log(`fault suite against ${ingressUrl}: ${selected.join(', ')} (${profile.name} each)`);

const rows = [];
try {
  for (const name of selected) {
    rows.push(
      await runFault(name, {
        profile,
        ratePerSecond: Number(values.rate),
        lanes: Number(values.lanes),
        log,
      }),
    );
  }
} finally {
  await restoreStack().catch((err) => log(`could not restore the stack: ${err.message}`));
}

console.log(`\n${formatTable(rows)}\n`);
const file = writeResults({
  startedAt: new Date(startedAt).toISOString(),
  seconds: Math.round((Date.now() - startedAt) / 1000),
  ingress: ingressUrl,
  profile: profile.name,
  rate: Number(values.rate),
  lanes: Number(values.lanes),
  rows,
});
console.log(`details: ${file}`);
const failed = rows.filter((r) => !r.ok);
console.log(
  failed.length === 0
    ? `all ${rows.length} fault(s): nothing lost, nothing doubled`
    : `${failed.length} of ${rows.length} fault(s) failed: ${failed.map((r) => r.fault).join(', ')}`,
);
if (started.length > 0) await down({ only: started, quiet: true });
process.exit(failed.length === 0 ? 0 : 1);
