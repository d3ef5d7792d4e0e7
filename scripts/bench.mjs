// `npm run bench`: benchmarks, not tests. Each prints its figures beside a baseline measured
// in the same run. Needs the local stack; brings it up if needed and stops what it started.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError, commandLine, positiveInteger } from './lib/args.mjs';
import { dataDir, down, ingressUrl, up } from './stack/index.mjs';
import { repoRoot } from './stack/config.mjs';
import { adminToken } from './stack/secrets.mjs';
import * as events from './bench/events.mjs';
import * as tokenExchange from './bench/token-exchange.mjs';

const benchmarks = [tokenExchange, events];
const names = benchmarks.map((b) => b.name);

const USAGE = `Usage: npm run bench -- [${names.join('|')} ...] [--seconds N] [--concurrency N]

Runs the named benchmarks (all by default) against the local stack, which it starts when needed.
  --seconds N      length of each measurement (default 10)
  --concurrency N  requests in flight (default 8)
  -h, --help       this text`;

const { values, positionals } = commandLine(USAGE, {
  options: {
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '8' },
  },
  allowPositionals: true,
  check({ values, positionals }) {
    positiveInteger('seconds', values.seconds);
    positiveInteger('concurrency', values.concurrency);
    const unknown = positionals.filter((p) => !names.includes(p));
    if (unknown.length > 0) {
      throw new UsageError(
        `unknown benchmark ${unknown.join(', ')}; choose from: ${names.join(', ')}`,
      );
    }
  },
});
const selected = positionals.length
  ? benchmarks.filter((b) => positionals.includes(b.name))
  : benchmarks;

const { started } = await up({ quiet: true });
try {
  const context = {
    ingressUrl,
    // ADMIN_TOKEN when set, else .herald/admin-token: what the stack just started with.
    adminToken: adminToken(),
    repoRoot,
    seconds: Number(values.seconds),
    concurrency: Number(values.concurrency),
  };
  console.log(
    `node ${process.version}, ${new Date().toISOString()}, ${context.seconds} s per measurement`,
  );
  const results = {};
  for (const bench of selected) results[bench.name] = await bench.run(context);
  const out = path.join(dataDir, 'bench', `results-${Date.now()}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(results, null, 2));
  console.log(`\nraw figures: ${path.relative(process.cwd(), out)}`);
} finally {
  if (started.length > 0) await down({ only: started, quiet: true });
}
