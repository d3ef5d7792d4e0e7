// Output of the local stack's scripts: progress lines (dropped with --quiet), warnings, and the
// error type that names the failing component. Node built-ins only.

let quiet = false;
/** @param {unknown} value */
export function setQuiet(value) {
  quiet = Boolean(value);
}
export function isQuiet() {
  return quiet;
}
/**
 * A progress line, dropped with --quiet.
 * @param {string} message
 */
export function say(message) {
  if (!quiet) process.stdout.write(`${message}\n`);
}
/**
 * Always shown (stderr).
 * @param {string} message
 */
export function warn(message) {
  process.stderr.write(`${message}\n`);
}

/** A failure of one component; the CLI prints `message` and the tail of `logFile`. */
export class StackError extends Error {
  /**
   * @param {string} component
   * @param {string} message
   * @param {{ logFile?: string, cause?: unknown, hint?: string }} [details]
   */
  constructor(component, message, { logFile, cause, hint } = {}) {
    super(`${component}: ${message}`, cause ? { cause } : undefined);
    this.name = 'StackError';
    this.component = component;
    this.logFile = logFile;
    this.hint = hint;
  }
}
