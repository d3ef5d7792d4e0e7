// Output of the local stack's scripts: progress lines (dropped with --quiet), warnings, and the
// error type that names the failing component. Node built-ins only.

let quiet = false;
export function setQuiet(value) {
  quiet = Boolean(value);
}
export function isQuiet() {
  return quiet;
}
/** A progress line, dropped with --quiet. */
export function say(message) {
  if (!quiet) process.stdout.write(`${message}\n`);
}
/** Always shown (stderr). */
export function warn(message) {
  process.stderr.write(`${message}\n`);
}

/** A failure of one component; the CLI prints `message` and the tail of `logFile`. */
export class StackError extends Error {
  constructor(component, message, { logFile, cause, hint } = {}) {
    super(`${component}: ${message}`, cause ? { cause } : undefined);
    this.name = 'StackError';
    this.component = component;
    this.logFile = logFile;
    this.hint = hint;
  }
}
