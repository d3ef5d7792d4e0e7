#!/usr/bin/env node
// Herald's local stack as plain processes on loopback: PostgreSQL, Redis, Kafka, nginx, Prometheus
// and the services of tools/stack/src/services.mjs. Node built-ins only (it runs before `npm install`).
// See docs/local-stack.md.
//
//   node tools/stack/src/cli.mjs up [--infra-only] [--no-build] [--restart-services] [--quiet]
//   node tools/stack/src/cli.mjs down
//   node tools/stack/src/cli.mjs status [--json]
//   node tools/stack/src/cli.mjs logs [component] [-f] [-n <lines>]
//   node tools/stack/src/cli.mjs traces [traceId] [--list] [-n <count>]
import { spawn } from 'node:child_process';
import path from 'node:path';
import { StackError, down, formatStatus, logFiles, status, up } from './index.mjs';
import { repoRoot } from './config.mjs';
import { exists, tailFile } from './files.mjs';
import {
  byTrace,
  formatTrace,
  formatTraceList,
  pickTrace,
  readSpans,
  tracesPaths,
} from './traces.mjs';
import { commandLine, usageFailure } from './args.mjs';
import { meetsNodeFloor, nodeFloorMessage } from './node-version.mjs';

const USAGE = `Usage: node tools/stack/src/cli.mjs <command> [options]   (npm start | npm stop | npm run stack -- <command>)

Commands:
  up        start everything that is not running, wait until it answers (idempotent)
              --infra-only        PostgreSQL, Redis, Kafka, nginx, Prometheus and the trace
                                  receiver only, no services
              --no-build          skip npm install and \`turbo run build\`
              --restart-services  restart services that are already running
              --quiet             print only errors
  down      stop everything (data stays in .herald/)
  status    one line per component; exit 0 when all are up, 3 otherwise   [--json]
  logs      log paths and the last lines of each log, or of one component
              [component] [-f|--follow] [-n <lines>]
  traces    a trace the trace receiver recorded, as a tree of its spans (service, kind,
            duration), then the traces linked to it (batches shared with other traces);
            the newest trace without an id; an id may be shortened to a unique prefix
              [traceId] [-l|--list] [-n <count>]   --list: the newest traces, one a line (20)
`;

/**
 * Each command's options (`--help` is everyone's).
 * @type {Record<string, import('./args.mjs').CommandLineConfig>}
 */
const COMMANDS = {
  up: {
    options: {
      'infra-only': { type: 'boolean' },
      'no-build': { type: 'boolean' },
      'restart-services': { type: 'boolean' },
      quiet: { type: 'boolean', short: 'q' },
    },
  },
  down: { options: { quiet: { type: 'boolean', short: 'q' } } },
  status: { options: { json: { type: 'boolean' } } },
  logs: {
    options: { follow: { type: 'boolean', short: 'f' }, lines: { type: 'string', short: 'n' } },
    allowPositionals: true,
  },
  traces: {
    options: { list: { type: 'boolean', short: 'l' }, count: { type: 'string', short: 'n' } },
    allowPositionals: true,
  },
};

function fail(message, code = 2) {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function printFailure(err) {
  process.stderr.write(`\n✖ ${err.message}\n`);
  if (err.hint) process.stderr.write(`${err.hint}\n`);
  if (err.logFile) {
    const tail = tailFile(err.logFile, 40);
    process.stderr.write(
      tail
        ? `\n--- last lines of ${path.relative(repoRoot, err.logFile)} ---\n${tail}\n--- end ---\n`
        : `(log ${err.logFile} is empty)\n`,
    );
  }
  if (!(err instanceof StackError) && err.stack) process.stderr.write(`${err.stack}\n`);
}

async function logs(positional, follow, lines) {
  const all = logFiles();
  const [name] = positional;
  if (name && !all[name]) fail(`unknown component ${name}; one of: ${Object.keys(all).join(', ')}`);
  const files = name ? all[name] : Object.values(all).flat();
  for (const file of files) {
    const rel = path.relative(repoRoot, file);
    if (!exists(file)) {
      process.stdout.write(`==> ${rel} (not created yet) <==\n\n`);
      continue;
    }
    const tail = tailFile(file, lines);
    process.stdout.write(`==> ${rel} <==\n${tail}${tail ? '\n' : ''}\n`);
  }
  if (follow) {
    const child = spawn('tail', ['-n', '0', '-F', ...files], { stdio: 'inherit' });
    process.on('SIGINT', () => child.kill('SIGTERM'));
    await new Promise((resolve) => child.on('close', resolve));
  }
}

function traces(id, list, count) {
  const all = byTrace(readSpans());
  const file = path.relative(repoRoot, tracesPaths.spansFile);
  if (all.size === 0) {
    process.stderr.write(
      `no spans in ${file} yet. By default only requests sent with a sampled traceparent are ` +
        'traced, e.g. curl -H "traceparent: 00-$(openssl rand -hex 16)-$(openssl rand -hex 8)-01" …; ' +
        'HERALD_TRACE_SAMPLE_RATIO=1 npm start traces every request (docs/local-stack.md)\n',
    );
    return 1;
  }
  if (list) {
    process.stdout.write(`${formatTraceList(all, count)}\n`);
    return 0;
  }
  const traceId = pickTrace(all, id);
  if (!traceId) {
    process.stderr.write(`no trace ${id} in ${file} (yet: spans arrive within a few seconds)\n`);
    return 1;
  }
  process.stdout.write(`${formatTrace(all, traceId)}\n`);
  return 0;
}

async function main() {
  const [command, ...args] = process.argv.slice(2);
  if (command === undefined || ['help', '-h', '--help'].includes(command)) {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (!Object.hasOwn(COMMANDS, command)) usageFailure(USAGE, `unknown command ${command}`);
  const { values, positionals } = commandLine(USAGE, COMMANDS[command], args);
  switch (command) {
    case 'up':
      await up({
        infraOnly: Boolean(values['infra-only']),
        build: !values['no-build'],
        restartServices: Boolean(values['restart-services']),
        quiet: Boolean(values.quiet),
      });
      return 0;
    case 'down':
      await down({ quiet: Boolean(values.quiet) });
      return 0;
    case 'status': {
      const rows = await status();
      if (values.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      else process.stdout.write(`${formatStatus(rows)}\n`);
      return rows.every((r) => r.ok || !r.expected) ? 0 : 3;
    }
    case 'logs': {
      const lines = Number(values.lines ?? 50);
      if (!Number.isInteger(lines) || lines < 0) usageFailure(USAGE, '-n wants a number of lines');
      if (positionals.length > 1) usageFailure(USAGE, `unexpected argument ${positionals[1]}`);
      await logs(positionals, Boolean(values.follow), lines);
      return 0;
    }
    case 'traces': {
      if (positionals.length > 1) usageFailure(USAGE, `unexpected argument ${positionals[1]}`);
      const count = Number(values.count ?? 20);
      if (!Number.isInteger(count) || count < 1) usageFailure(USAGE, '-n wants a number of traces');
      return traces(positionals[0], Boolean(values.list), count);
    }
  }
  return 2;
}

if (!meetsNodeFloor(process.version)) fail(nodeFloorMessage(), 1);

let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  if (process.argv[2] !== 'logs') {
    process.stderr.write('\ninterrupted: started processes keep running; `npm stop` stops them\n');
    process.exit(130);
  }
});

main().then(
  (code) => process.exit(code),
  (err) => {
    printFailure(err);
    process.exit(1);
  },
);
