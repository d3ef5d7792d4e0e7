#!/usr/bin/env node
// Herald's local stack as plain processes on loopback: PostgreSQL, Redis, Kafka, nginx and the
// services of scripts/stack/services.mjs. Node built-ins only (it runs before `npm install`).
// See docs/local-stack.md.
//
//   node scripts/stack.mjs up [--infra-only] [--no-build] [--restart-services] [--quiet]
//   node scripts/stack.mjs down
//   node scripts/stack.mjs status [--json]
//   node scripts/stack.mjs logs [component] [-f] [-n <lines>]
import { spawn } from 'node:child_process';
import path from 'node:path';
import { StackError, down, formatStatus, logFiles, status, up } from './stack/index.mjs';
import { repoRoot } from './stack/config.mjs';
import { exists, tailFile } from './stack/util.mjs';

const USAGE = `Usage: node scripts/stack.mjs <command> [options]   (npm start | npm stop | npm run stack -- <command>)

Commands:
  up        start everything that is not running, wait until it answers (idempotent)
              --infra-only        PostgreSQL, Redis, Kafka and nginx only, no services
              --no-build          skip npm install and \`turbo run build\`
              --restart-services  restart services that are already running
              --quiet             print only errors
  down      stop everything (data stays in .herald/)
  status    one line per component; exit 0 when all are up, 3 otherwise   [--json]
  logs      log paths and the last lines of each log, or of one component
              [component] [-f|--follow] [-n <lines>]
`;

function parse(argv) {
  const [command, ...rest] = argv;
  const flags = new Set();
  const positional = [];
  let lines = 50;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '-n' || a === '--lines') lines = Number(rest[++i]);
    else if (a.startsWith('-')) flags.add(a);
    else positional.push(a);
  }
  return { command, flags, positional, lines };
}

function fail(message, code = 2) {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function checkFlags(flags, allowed) {
  for (const f of flags) if (!allowed.includes(f)) fail(`unknown option ${f}\n\n${USAGE}`);
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

async function logs(positional, flags, lines) {
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
  if (flags.has('-f') || flags.has('--follow')) {
    const child = spawn('tail', ['-n', '0', '-F', ...files], { stdio: 'inherit' });
    process.on('SIGINT', () => child.kill('SIGTERM'));
    await new Promise((resolve) => child.on('close', resolve));
  }
}

async function main() {
  const { command, flags, positional, lines } = parse(process.argv.slice(2));
  switch (command) {
    case 'up': {
      checkFlags(flags, ['--infra-only', '--no-build', '--restart-services', '--quiet', '-q']);
      await up({
        infraOnly: flags.has('--infra-only'),
        build: !flags.has('--no-build'),
        restartServices: flags.has('--restart-services'),
        quiet: flags.has('--quiet') || flags.has('-q'),
      });
      return 0;
    }
    case 'down':
      checkFlags(flags, ['--quiet', '-q']);
      await down({ quiet: flags.has('--quiet') || flags.has('-q') });
      return 0;
    case 'status': {
      checkFlags(flags, ['--json']);
      const rows = await status();
      if (flags.has('--json')) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      else process.stdout.write(`${formatStatus(rows)}\n`);
      return rows.every((r) => r.ok || !r.expected) ? 0 : 3;
    }
    case 'logs':
      checkFlags(flags, ['-f', '--follow']);
      if (!Number.isInteger(lines) || lines < 0) fail('-n wants a number of lines');
      await logs(positional, flags, lines);
      return 0;
    case undefined:
    case 'help':
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      fail(`unknown command ${command}\n\n${USAGE}`);
  }
  return 2;
}

const [major] = process.versions.node.split('.').map(Number);
if (major < 20) fail(`Node.js 20 or newer is needed (this is ${process.version})`, 1);

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
