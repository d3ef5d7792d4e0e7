// The chart check's steps: each timed and reported on one line, a failure with its message
// indented below, and the summary line that ends the run and sets the exit code.

/** @type {{ name: string, ok: boolean }[]} */
const results = [];

/**
 * Runs one step; `fn` returns a detail for its line, or throws to fail it.
 * @param {string} name
 * @param {() => (string | void | undefined) | Promise<string | void | undefined>} fn
 */
export async function step(name, fn) {
  const started = Date.now();
  let failure;
  /** @type {string | void} */
  let detail = '';
  try {
    detail = (await fn()) ?? '';
  } catch (error) {
    failure = error;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  results.push({ name, ok: !failure });
  const line = `chart-check: ${failure ? 'FAIL' : 'ok  '} ${name} (${seconds}s)${detail ? `: ${detail}` : ''}`;
  console.log(line);
  if (failure) console.log(indent(failure.message));
}

/** Whether every step so far passed. */
export function allPassed() {
  return results.every((r) => r.ok);
}

/**
 * The summary line; the exit code is 1 when a step failed.
 * @param {number} started when the check started (ms since the epoch)
 */
export function finish(started) {
  const failed = results.filter((r) => !r.ok).length;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`chart-check: ${results.length - failed} passed, ${failed} failed (${seconds}s)`);
  process.exitCode = failed > 0 ? 1 : 0;
}

/** @param {string} text */
function indent(text) {
  return text
    .trim()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}
