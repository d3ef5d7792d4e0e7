// The command line of every .mjs script in the repository, in one place: `--help` (or `-h`)
// prints the script's usage and exits 0; an unknown option, a missing value or an unexpected
// argument prints the problem and the usage and exits 2, never a stack trace. Node built-ins only.
import { parseArgs } from 'node:util';

/** A command line the script cannot run; `commandLine` prints it with the usage (exit 2). */
export class UsageError extends Error {
  /** @override */
  name = 'UsageError';
}

/**
 * A script's options as `util.parseArgs` takes them; written inline, each option's value is
 * typed by its `type`.
 * @typedef {NonNullable<import('node:util').ParseArgsConfig['options']>} Options
 */
/**
 * @template {Options} [O=Options]
 * @typedef {object} ParsedCommandLine
 * @property {ReturnType<typeof parseArgs<{ options: O; strict: true }>>['values']} values
 * @property {string[]} positionals
 * @property {string[]} rest what followed `--` (with `passThrough`)
 * @property {boolean} help
 */
/**
 * @template {Options} [O=Options]
 * @typedef {object} CommandLineConfig
 * @property {O} [options]
 * @property {boolean} [allowPositionals]
 * @property {boolean} [passThrough] keep what follows `--` apart, in `rest`
 * @property {(parsed: ParsedCommandLine<O>) => void} [check] throws UsageError for rules of
 *   the script's own
 */

/**
 * `util.parseArgs` (strict) plus `--help`/`-h`. Returns `{ values, positionals, rest, help }`;
 * `rest` is what follows a `--` when `passThrough` is set (e.g. options for another program),
 * else `--` ends the options as usual. Throws UsageError for what parseArgs refuses.
 * @template {Options} O
 * @param {string[]} args
 * @param {CommandLineConfig<O>} [config]
 * @returns {ParsedCommandLine<O>}
 */
export function parseCommandLine(args, config = {}) {
  const { options, allowPositionals = false, passThrough } = config;
  const end = passThrough ? args.indexOf('--') : -1;
  const own = end === -1 ? args : args.slice(0, end);
  const rest = end === -1 ? [] : args.slice(end + 1);
  /** @type {{ values: Record<string, unknown>, positionals: string[] }} */
  let parsed;
  try {
    parsed = parseArgs({
      args: own,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals,
      strict: true,
    });
  } catch (error) {
    // parseArgs errors come from Node's own realm: read them by their code, not instanceof.
    if (!String(error?.code).startsWith('ERR_PARSE_ARGS_')) throw error;
    // Node's messages explain parseArgs' own syntax; a line naming the culprit is clearer here.
    const unknown = /^Unknown option '([^']+)'/.exec(error.message);
    const unexpected = /^Unexpected argument '([^']+)'/.exec(error.message);
    throw new UsageError(
      unknown
        ? `unknown option ${unknown[1]}`
        : unexpected
          ? `unexpected argument ${unexpected[1]}`
          : error.message,
    );
  }
  const { help = false, ...values } = parsed.values;
  return {
    values: /** @type {ParsedCommandLine<O>['values']} */ (values),
    positionals: parsed.positionals,
    rest,
    help: /** @type {boolean} */ (help),
  };
}

/**
 * Prints `message` and the usage on stderr and exits 2.
 * @param {string} usage
 * @param {string} message
 * @returns {never}
 */
export function usageFailure(usage, message) {
  process.stderr.write(`${message}\n\n${withNewline(usage)}`);
  process.exit(2);
}

/**
 * For a script's top level: its parsed command line (as `parseCommandLine`), or, on `--help`,
 * the usage on stdout and exit 0, or, on a usage error, the problem and the usage and exit 2.
 * `check(parsed)` may throw UsageError for rules of its own (a number, a known name).
 * @template {Options} O
 * @param {string} usage
 * @param {CommandLineConfig<O>} [config]
 * @param {string[]} [args]
 * @returns {ParsedCommandLine<O>}
 */
export function commandLine(usage, config = {}, args = process.argv.slice(2)) {
  try {
    const parsed = parseCommandLine(args, config);
    if (parsed.help) {
      process.stdout.write(withNewline(usage));
      process.exit(0);
    }
    config.check?.(parsed);
    return parsed;
  } catch (error) {
    if (error instanceof UsageError) usageFailure(usage, error.message);
    throw error;
  }
}

/**
 * A whole number >= 1 from an option's text, else a UsageError naming the option.
 * @param {string} name
 * @param {string} text
 */
export function positiveInteger(name, text) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`--${name} wants a whole number >= 1, got "${text}"`);
  return n;
}

/** @param {string} text */
function withNewline(text) {
  return text.endsWith('\n') ? text : `${text}\n`;
}
