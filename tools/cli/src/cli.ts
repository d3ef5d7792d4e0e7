import { parseInvocation, UsageError } from './args.js';
import { callApi } from './client.js';
import { requestOf } from './commands.js';
import { helpText, synopsis } from './help.js';
import { formatFailure, formatSuccess } from './output.js';
import { adminTokenOf, baseUrlOf, CliError, type Env } from './settings.js';

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
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

  try {
    const { command, values, output } = invocation;
    const answer = await callApi(baseUrlOf(env), adminTokenOf(env), requestOf(command, values));
    if (answer.status >= 400) {
      io.stderr(formatFailure(answer));
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

function usageHint(error: UsageError): string {
  const { command, group, full } = error.hint;
  if (command) return `usage: herald-admin ${synopsis(command)}\n`;
  if (group !== undefined) return `Run "herald-admin ${group} --help" for its commands.\n`;
  return full ? `\n${helpText()}` : `Run "herald-admin help" for the commands.\n`;
}
