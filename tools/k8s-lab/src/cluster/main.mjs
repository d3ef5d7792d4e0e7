#!/usr/bin/env node
// A real single-node Kubernetes cluster on this machine as plain processes (etcd, the control
// plane, containerd, the kubelet and kube-proxy), its data under .herald/cluster. Node built-ins
// only. See docs/cluster.md.
//
//   node tools/k8s-lab/src/cluster/main.mjs up | down | status | check | logs [component]
import path from 'node:path';
import { commandLine, usageFailure } from '@herald/stack/args.mjs';
import { repoRoot } from '@herald/stack/config.mjs';
import { StackError } from '@herald/stack/output.mjs';
import { check } from './check.mjs';
import { logTail } from './components.mjs';
import { COMPONENTS } from './config.mjs';
import { down } from './down.mjs';
import { status } from './status.mjs';
import { up } from './up.mjs';

const USAGE = `Usage: node tools/k8s-lab/src/cluster/main.mjs <command>   (npm run cluster -- <command>)

Commands:
  up       build the binaries once, start everything that is not running, wait until the node
           is Ready and CoreDNS answers (idempotent); Herald's images are pulled from the
           registry \`npm run release\` pushes to
  down     stop everything and remove what pods leave on the machine (mounts, the bridge,
           iptables chains, pod cgroups); the cluster's data stays in .herald/cluster
  status   one line per component, then the node and the pods; exit 0 when all are up, 3 if not
  check    apply a 2-replica Deployment and a Service in a namespace enforcing the restricted
           Pod Security level; prove the pods run, a privileged pod is refused and the
           Service's name resolves through CoreDNS; exit 1 when a step fails
  logs     the last lines of each component's log, or of one   [component]
`;

const COMMANDS = {
  up: {},
  down: {},
  status: {},
  check: {},
  logs: { allowPositionals: true },
};

function printFailure(err) {
  process.stderr.write(`\n✖ ${err.message}\n`);
  if (err.logFile) {
    const name = path.basename(err.logFile, '.log');
    process.stderr.write(
      `\n--- last lines of ${path.relative(repoRoot, err.logFile)} ---\n${logTail(name)}\n--- end ---\n`,
    );
  }
  if (!(err instanceof StackError) && err.stack) process.stderr.write(`${err.stack}\n`);
}

async function main() {
  const [command, ...args] = process.argv.slice(2);
  if (command === undefined || ['help', '-h', '--help'].includes(command)) {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (!Object.hasOwn(COMMANDS, command)) usageFailure(USAGE, `unknown command ${command}`);
  const { positionals } = commandLine(USAGE, COMMANDS[command], args);
  switch (command) {
    case 'up':
      await up();
      return 0;
    case 'down':
      await down();
      return 0;
    case 'status':
      return status();
    case 'check':
      return check();
    case 'logs': {
      const names = positionals.length > 0 ? positionals : [...COMPONENTS, 'build'];
      for (const name of names) process.stdout.write(`==> ${name} <==\n${logTail(name)}\n\n`);
      return 0;
    }
  }
  return 2;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    printFailure(err);
    process.exit(1);
  },
);
