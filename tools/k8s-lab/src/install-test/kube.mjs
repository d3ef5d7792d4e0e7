// kubectl and helm as the test runs them: against the cluster of `npm run cluster`, output
// captured, a failure thrown with the command's own stderr.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { dataDir } from '@herald/stack/config.mjs';

export const kubeconfig = path.join(dataDir, 'cluster', 'kubeconfig');
export const kubectlBin = path.join(dataDir, 'tools', 'kubernetes-v1.35.4', 'kubectl');
export const helmBin = path.join(dataDir, 'tools', 'go', 'bin', 'helm');

/** Runs a command; resolves { code, stdout, stderr }, rejects on a non-zero exit unless `allowFail`. */
export function run(cmd, args, { allowFail = false, env = {}, timeoutMs = 15 * 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: { ...process.env, KUBECONFIG: kubeconfig, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const result = { code, stdout, stderr };
      if (code !== 0 && !allowFail) {
        const shown = [cmd, ...args].map((a) => (a.length > 80 ? `${a.slice(0, 77)}...` : a));
        const message = `${shown.join(' ')} exited ${code}: ${(stderr || stdout).trim()}`;
        reject(Object.assign(new Error(message), { result }));
      } else resolve(result);
    });
  });
}

export const kubectl = (args, opts) => run(kubectlBin, args, opts);
export const helm = (args, opts) => run(helmBin, args, opts);

export async function kubectlJson(args) {
  return JSON.parse((await kubectl([...args, '-o', 'json'])).stdout);
}
