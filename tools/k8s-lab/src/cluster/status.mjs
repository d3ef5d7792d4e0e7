// `status`: one line per component (its pid, whether it answers, where it listens), then the
// node and the pods as kubectl shows them; exit code 0 when all are up, 3 if not.
import path from 'node:path';
import { readText } from '@herald/stack/files.mjs';
import {
  kubectl,
  listening,
  nodeIp,
  nodeReady,
  paths,
  readiness,
  rel,
  running,
} from './components.mjs';
import { COMPONENTS, NODE_NAME } from './config.mjs';

export async function status() {
  let ip = null;
  try {
    ip = await nodeIp();
  } catch {
    // reported below
  }
  const caPem = readText(path.join(paths.pki, 'ca.crt')) ?? undefined;
  const ready = readiness(ip, caPem);
  const ports = listening(ip);
  const rows = [];
  let allUp = true;
  for (const name of COMPONENTS) {
    const pid = running(name);
    const answers = pid ? await ready[name]() : false;
    if (!answers) allUp = false;
    const where = ports[name].map(([h, p]) => `${h}:${p}`).join(' ') || rel(paths.containerdSocket);
    rows.push([
      name,
      pid ? String(pid) : '-',
      pid ? (answers ? 'up' : 'not answering') : 'stopped',
      where,
    ]);
  }
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length), 9));
  const line = (r) =>
    `${r[0].padEnd(widths[0])}  ${r[1].padEnd(widths[1])}  ${r[2].padEnd(widths[2])}  ${r[3]}`;
  process.stdout.write(`${line(['component', 'pid', 'state', 'listens'])}\n`);
  for (const r of rows) process.stdout.write(`${line(r)}\n`);
  if (running('kube-apiserver')) {
    const { stdout, stderr } = await kubectl(['get', 'nodes', '-o', 'wide'], { check: false });
    process.stdout.write(`\n${stdout || stderr}`);
    const pods = await kubectl(['get', 'pods', '-A', '-o', 'wide'], { check: false });
    process.stdout.write(`\n${pods.stdout || pods.stderr}`);
    if (!(await nodeReady())) allUp = false;
  } else {
    process.stdout.write(`\nnode ${NODE_NAME}: unknown (the apiserver is not running)\n`);
  }
  return allUp ? 0 : 3;
}
