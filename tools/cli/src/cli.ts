import { parseInvocation, UsageError } from './args.js';
import { callApi, type StreamReader } from './client.js';
import { sseReader } from './sse.js';
import { requestOf } from './commands.js';
import { startForward, type ForwardOptions } from './forward/forward.js';
import { forwardSynopsis, helpText, synopsis } from './help.js';
import { formatFailure, formatSuccess } from './output.js';
import { adminTokenOf, baseUrlOf, CliError, type Env } from './settings.js';

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Resolves when a long-running command (forward) should stop: Ctrl-C or SIGTERM. */
  untilStopped?(): Promise<void>;
}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Runs one command line and returns its exit code; failures are reported on `io.stderr`. */
export async function main(argv: readonly string[], env: Env, io: Io): Promise<number> {
  let invocation;
  try {
    invocation = parseInvocation(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`error: ${error.message}\n${usageHint(error)}`);
    return EXIT_USAGE;
  }
  if (invocation.kind === 'help') {
    io.stdout(helpText(invocation));
    return EXIT_OK;
  }

  if (invocation.kind === 'forward') return forward(invocation.options, env, io);

  try {
    const { command, values, output } = invocation;
    const answer = await callApi(
      baseUrlOf(env),
      adminTokenOf(env),
      requestOf(command, values),
      command.stream ? liveReader(io) : command.raw ? fileReader(io) : undefined,
    );
    if (answer.status >= 400) {
      io.stderr(formatFailure(answer));
      return EXIT_FAILED;
    }
    if (answer.stopped) return EXIT_OK;
    if (command.stream) {
      io.stderr('error: the stream ended (the server closed it); run the command again\n');
      return EXIT_FAILED;
    }
    io.stdout(formatSuccess(answer, output));
    return EXIT_OK;
  } catch (error) {
    const message =
      error instanceof CliError ? error.message : `unexpected failure: ${String(error)}`;
    io.stderr(`error: ${message}\n`);
    return EXIT_FAILED;
  }
}

/** A file (`contacts export`): printed as it comes, however long it takes. */
function fileReader(io: Io): StreamReader {
  return { chunk: (text) => io.stdout(text), stopped: new Promise<void>(() => {}) };
}

/** `events live`: each recorded Event as one JSON line on stdout, left-out counts on stderr. */
function liveReader(io: Io): StreamReader {
  return {
    chunk: sseReader((message) => {
      if (message.event === 'recorded') io.stdout(`${message.data}\n`);
      else if (message.event === 'skipped') {
        const { count, atLeast } = JSON.parse(message.data) as { count: number; atLeast: boolean };
        io.stderr(`events live: ${atLeast ? 'at least ' : ''}${count} events not shown\n`);
      }
    }),
    stopped: io.untilStopped?.() ?? Promise.resolve(),
  };
}

/** Serves the operator routes until stopped; exit code 1 when they cannot be forwarded. */
async function forward(options: ForwardOptions, env: Env, io: Io): Promise<number> {
  const log = (line: string) => io.stderr(`forward: ${line}\n`);
  let running;
  try {
    running = await startForward(options, env, log);
  } catch (error) {
    const message =
      error instanceof CliError ? error.message : `unexpected failure: ${String(error)}`;
    io.stderr(`error: ${message}\n`);
    return EXIT_FAILED;
  }
  const where = options.namespace ? `namespace ${options.namespace}` : "kubectl's namespace";
  const services = [...running.services].map(([s, name]) => `  ${s.padEnd(9)} service/${name}`);
  io.stdout(
    [
      `Operator API of release "${options.release}" (${where}) on ${running.url}`,
      ...services,
      `In another shell: export HERALD_URL=${running.url}`,
      'Stop with Ctrl-C.',
      '',
    ].join('\n'),
  );
  await (io.untilStopped?.() ?? Promise.resolve());
  await running.close();
  return EXIT_OK;
}

function usageHint(error: UsageError): string {
  const { command, group, full, forward: forwardHint } = error.hint;
  if (forwardHint) return `usage: herald-admin ${forwardSynopsis}\n`;
  if (command) return `usage: herald-admin ${synopsis(command)}\n`;
  if (group !== undefined) return `Run "herald-admin ${group} --help" for its commands.\n`;
  return full ? `\n${helpText()}` : `Run "herald-admin help" for the commands.\n`;
}
