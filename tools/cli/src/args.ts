import { parseArgs, type ParseArgsConfig } from 'node:util';
import { commands, type Command, type Values } from './commands.js';

export interface OutputOptions {
  /** Print only this field of the answer (a dotted path), raw. */
  readonly get?: string;
  /** Compact one-line JSON instead of pretty JSON. */
  readonly json: boolean;
}

export type Invocation =
  | { readonly kind: 'help'; readonly group?: string; readonly command?: Command }
  | {
      readonly kind: 'run';
      readonly command: Command;
      readonly values: Values;
      readonly output: OutputOptions;
    };

/** The command line is wrong: nothing was sent (exit code 2). */
export class UsageError extends Error {
  constructor(
    message: string,
    /** What to show under the message: a command's synopsis, or the whole help. */
    readonly hint: { command?: Command; group?: string; full?: boolean } = {},
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

const globalOptions = {
  get: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** Every option any command knows, so one strict parse catches typos everywhere. */
const allOptions: NonNullable<ParseArgsConfig['options']> = { ...globalOptions };
for (const command of commands) {
  for (const name of Object.keys(command.flags)) allOptions[name] = { type: 'string' };
}

export const groups: readonly string[] = [...new Set(commands.map((c) => c.group))];

export function commandsOf(group: string): Command[] {
  return commands.filter((c) => c.group === group);
}

export function parseInvocation(argv: readonly string[]): Invocation {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: allOptions,
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    // parseArgs errors come from Node's own realm: read them by shape, not instanceof.
    const { code, message } = error as { code?: string; message?: string };
    const option = /'(-[^']*)'/.exec(message ?? '')?.[1];
    throw new UsageError(
      code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option
        ? `unknown option ${option}`
        : (message ?? String(error)),
    );
  }
  const { positionals } = parsed;
  const options = parsed.values as Record<string, string | boolean | undefined>;
  const help = options.help === true;

  const [first, ...rest] = positionals;
  if (first === undefined) {
    if (help) return { kind: 'help' };
    throw new UsageError('missing command', { full: true });
  }
  if (first === 'help') return helpFor(rest);

  if (help) return helpFor(positionals);
  const command = findCommand(positionals, false);

  for (const [name, value] of Object.entries(options)) {
    if (name in globalOptions || value === undefined) continue;
    if (!(name in command.flags)) {
      throw new UsageError(`"${nameOf(command)}" has no option --${name}`, { command });
    }
  }

  const values: Record<string, string | undefined> = {};
  for (const [name, flag] of Object.entries(command.flags)) {
    const value = options[name] as string | undefined;
    if (flag.required && (value === undefined || value === '')) {
      throw new UsageError(`missing required option --${name} ${flag.value}`, { command });
    }
    if (value !== undefined && flag.choices && !flag.choices.includes(value)) {
      throw new UsageError(`--${name} must be one of ${flag.choices.join(', ')} (got "${value}")`, {
        command,
      });
    }
    if (value !== undefined && flag.pattern && !flag.pattern.regex.test(value)) {
      throw new UsageError(`--${name} must be ${flag.pattern.describes} (got "${value}")`, {
        command,
      });
    }
    values[name] = value ?? flag.default;
  }

  const get = options.get as string | undefined;
  if (get === '') throw new UsageError('--get needs a field name, e.g. --get id', { command });
  return { kind: 'run', command, values, output: { get, json: options.json === true } };
}

export function nameOf(command: Command): string {
  return `${command.group} ${command.action}`;
}

/**
 * The command the positionals name, or `undefined` for a group alone when asking for help.
 * Anything else that names no command is a usage error.
 */
function findCommand(positionals: readonly string[], forHelp: false): Command;
function findCommand(positionals: readonly string[], forHelp: boolean): Command | undefined;
function findCommand(positionals: readonly string[], forHelp: boolean): Command | undefined {
  const [group, action, extra] = positionals as [string, string?, string?];
  const inGroup = commandsOf(group);
  if (inGroup.length === 0) {
    throw new UsageError(`unknown command "${group}"`, { full: true });
  }
  const actions = inGroup.map((c) => c.action).join(', ');
  if (action === undefined) {
    if (forHelp) return undefined;
    throw new UsageError(`missing action for "${group}": one of ${actions}`, { group });
  }
  const command = inGroup.find((c) => c.action === action);
  if (command === undefined) {
    throw new UsageError(`unknown command "${group} ${action}"; "${group}" has ${actions}`, {
      group,
    });
  }
  if (extra !== undefined) {
    throw new UsageError(`unexpected argument "${extra}" (options are written --name value)`, {
      command,
    });
  }
  return command;
}

function helpFor(topic: readonly string[]): Invocation {
  if (topic.length === 0) return { kind: 'help' };
  const command = findCommand(topic, true);
  return command ? { kind: 'help', command } : { kind: 'help', group: topic[0] };
}
