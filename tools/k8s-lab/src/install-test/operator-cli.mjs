// The operator's way into a release whose operator API is not exposed, as NOTES.txt and the
// CLI's README give it: `herald-admin forward` (one kubectl port-forward per Service, a router in
// front), and every operator route called through it with herald-admin itself, and the operator
// console's page.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '@herald/stack/config.mjs';
import { adminToken } from '@herald/stack/secrets.mjs';
import { kubeconfig, kubectlBin, run } from './kube.mjs';
import { NAMESPACE, RELEASE } from './release.mjs';

const cli = path.join(repoRoot, 'tools', 'cli', 'dist', 'main.js');

/**
 * Starts `herald-admin forward` for the release; resolves its address and a stop function that
 * ends it as Ctrl-C does and rejects unless it exits 0.
 */
async function startForward() {
  const child = spawn(
    process.execPath,
    [cli, 'forward', '--namespace', NAMESPACE, '--release', RELEASE, '--port', '0'],
    {
      env: { ...process.env, KUBECTL: kubectlBin, KUBECONFIG: kubeconfig },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let said = '';
  child.stderr.on('data', (d) => (said += d));
  const exited = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const found = / on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out)?.[1];
      if (found) resolve(found);
    });
    exited.then((code) => reject(new Error(`herald-admin forward exited ${code}: ${said.trim()}`)));
  });
  return {
    url,
    stop: async () => {
      child.kill('SIGINT');
      const code = await exited;
      if (code !== 0) throw new Error(`herald-admin forward exited ${code}: ${said.trim()}`);
    },
  };
}

/**
 * A Tenant made, used on every operator route (auth, contacts, events, billing) and deleted, all
 * through `herald-admin forward`; resolves a summary line.
 */
export async function operatorRoutesThroughForward() {
  const forward = await startForward();
  try {
    const env = { HERALD_URL: forward.url, ADMIN_TOKEN: adminToken() };
    const admin = async (/** @type {string[]} */ ...args) =>
      (await run(process.execPath, [cli, ...args], { env, timeoutMs: 60_000 })).stdout.trim();
    const tenant = await admin(
      'tenants',
      'create',
      '--name',
      'k8s operator forward',
      '--get',
      'id',
    );
    const commands = [
      ['keys', 'create', '--tenant', tenant, '--kind', 'publishable', '--get', 'clientId'],
      ['organizations', 'create', '--tenant', tenant, '--external-id', 'org-forward'],
      ['event-names', 'list', '--tenant', tenant],
      ['billing', 'show', '--tenant', tenant],
      ['event-retention', 'set', '--tenant', tenant, '--days', '30'],
      ['event-retention', 'show', '--tenant', tenant, '--get', 'days'],
    ];
    const answers = [];
    for (const args of commands) answers.push(await admin(...args));
    await admin('keys', 'revoke', '--tenant', tenant, '--client-id', answers[0]);
    if (answers[5] !== '30') throw new Error(`event-retention show answered ${answers[5]}, not 30`);
    await admin('tenants', 'delete', '--tenant', tenant, '--confirm', tenant);
    // The operator console comes through the same address, with its policy.
    const page = await fetch(`${forward.url}/console/`);
    const policy = page.headers.get('content-security-policy') ?? '';
    if (page.status !== 200 || !policy.includes("frame-ancestors 'none'")) {
      throw new Error(`/console/ answered ${page.status}, Content-Security-Policy "${policy}"`);
    }
    return `${commands.length + 3} herald-admin commands through ${forward.url}, every Service's operator routes; the console's page`;
  } finally {
    await forward.stop();
  }
}
