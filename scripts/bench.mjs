// `npm run bench`: benchmarks, not tests. Each prints its figures beside a baseline measured
// in the same run. Needs the local stack; brings it up if needed and stops what it started.
// Options: --seconds N (default 10), --concurrency N (default 8), or a benchmark's name.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { dataDir, down, ingressUrl, up } from './stack/index.mjs';
import { repoRoot } from './stack/config.mjs';
import * as events from './bench/events.mjs';
import * as tokenExchange from './bench/token-exchange.mjs';

const benchmarks = [tokenExchange, events];

const { values, positionals } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '8' },
  },
  allowPositionals: true,
});
const selected = positionals.length
  ? benchmarks.filter((b) => positionals.includes(b.name))
  : benchmarks;
if (selected.length === 0) {
  console.error(`unknown benchmark; choose from: ${benchmarks.map((b) => b.name).join(', ')}`);
  process.exit(2);
}

const { started } = await up({ quiet: true });
try {
  const adminToken =
    process.env.ADMIN_TOKEN || fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
  const context = {
    ingressUrl,
    adminToken,
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
