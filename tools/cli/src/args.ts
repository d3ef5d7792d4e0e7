import { parseArgs, type ParseArgsConfig } from 'node:util';
import { commands, type Command, type Values } from './commands.js';
import type { ForwardOptions } from './forward/forward.js';

export interface OutputOptions {
  /** Print only this field of the answer (a dotted path), raw. */
  readonly get?: string;
  /** Compact one-line JSON instead of pretty JSON. */
  readonly json: boolean;
  /** The answer is a file: printed as it came. */
  readonly raw?: boolean;
}

export type Invocation =
  | {
      readonly kind: 'help';
      readonly group?: string;
      readonly command?: Command;
      readonly forward?: boolean;
    }
  | { readonly kind: 'forward'; readonly options: ForwardOptions }
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
    readonly hint: { command?: Command; group?: string; full?: boolean; forward?: boolean } = {},
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

/** `forward`'s options: where the installation is, and the local port. */
export const forwardFlags = {
  namespace: { value: '<namespace>', help: "the release's namespace (default: kubectl's)" },
  release: { value: '<name>', help: 'the Helm release name', default: 'herald' },
  port: { value: '<port>', help: 'the local port on 127.0.0.1 (0: any free one)', default: '8081' },
  context: { value: '<context>', help: "the kubeconfig context (default: kubectl's)" },
} as const;

/** Every option any command knows, so one strict parse catches typos everywhere. */
const allOptions: NonNullable<ParseArgsConfig['options']> = { ...globalOptions };
for (const name of Object.keys(forwardFlags)) allOptions[name] = { type: 'string' };
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
  if (first === 'forward') return forwardInvocation(rest, options);
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
  if ((command.raw || command.stream) && (get !== undefined || options.json === true)) {
    throw new UsageError(`"${nameOf(command)}" prints what comes as it comes: no --get or --json`, {
      command,
    });
  }
  return {
    kind: 'run',
    command,
    values,
    output: {
      get,
      json: options.json === true,
      raw: command.raw === true || command.stream === true,
    },
  };
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

/** `forward [--namespace <ns>] [--release <name>] [--port <port>] [--context <context>]`. */
function forwardInvocation(
  extra: readonly string[],
  options: Record<string, string | boolean | undefined>,
): Invocation {
  const hint = { forward: true };
  if (extra.length > 0) {
    throw new UsageError(
      `unexpected argument "${extra[0]}" (options are written --name value)`,
      hint,
    );
  }
  for (const [name, value] of Object.entries(options)) {
    if (value !== undefined && !(name in forwardFlags) && name !== 'help') {
      throw new UsageError(`"forward" has no option --${name}`, hint);
    }
  }
  const text = (name: keyof typeof forwardFlags) => {
    const value = options[name] as string | undefined;
    if (value === '') throw new UsageError(`--${name} needs a value`, hint);
    return value;
  };
  const port = text('port') ?? forwardFlags.port.default;
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) {
    throw new UsageError(`--port must be a TCP port, 0 to 65535 (got "${port}")`, hint);
  }
  return {
    kind: 'forward',
    options: {
      namespace: text('namespace'),
      release: text('release') ?? forwardFlags.release.default,
      port: Number(port),
      context: text('context'),
    },
  };
}

function helpFor(topic: readonly string[]): Invocation {
  if (topic.length === 0) return { kind: 'help' };
  if (topic[0] === 'forward') return { kind: 'help', forward: true };
  const command = findCommand(topic, true);
  return command ? { kind: 'help', command } : { kind: 'help', group: topic[0] };
}
