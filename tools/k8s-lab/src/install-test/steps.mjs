// The install test's steps: each announced, then reported `ok` or `not ok` with its time; when
// each started (to say in which step a Warning event happened); the closing summary.

/** @type {{ name: string, ok: boolean }[]} */
const results = [];
const t0 = Date.now();

/** When each step started, to say in which one a Warning event happened. */
const stepStarts = [];

/** @param {number} ms */
export const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

/**
 * The step that was running at `time` (ms since the epoch).
 * @param {number} time
 */
export function stepAt(time) {
  return stepStarts.findLast((s) => s.start <= time)?.name ?? 'before the first step';
}

/**
 * Runs one step; `fn` resolves a detail for its line, or throws to fail it. A failed step
 * rethrows its error, marked `reported`, unless it is `optional`: then it resolves false.
 * @param {string} name
 * @param {() => Promise<string | void> | string | void} fn
 * @param {{ optional?: boolean }} [options]
 */
export async function step(name, fn, { optional = false } = {}) {
  const start = Date.now();
  stepStarts.push({ name, start });
  process.stdout.write(`… ${name}\n`);
  try {
    const detail = await fn();
    const line = `ok     ${name} (${secs(Date.now() - start)})${detail ? `: ${detail}` : ''}`;
    console.log(line);
    results.push({ name, ok: true });
    return true;
  } catch (err) {
    console.log(`not ok ${name} (${secs(Date.now() - start)}): ${err.message}`);
    results.push({ name, ok: false });
    if (!optional) throw Object.assign(err, { reported: true });
    return false;
  }
}

/**
 * Prints how many steps passed and failed, and in how long; the number that failed.
 */
export function printSummary() {
  const passed = results.filter((r) => r.ok).length;
  const notOk = results.length - passed;
  console.log(`\n${passed} passed, ${notOk} failed in ${secs(Date.now() - t0)}`);
  return notOk;
}
