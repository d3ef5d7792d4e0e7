// What every step of the chart check shares: where the chart and its generated files are, the
// release name, what "the default values" mean here, and how it runs a program.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot as root } from '@herald/stack/config.mjs';
import { KUBERNETES_VERSION } from './k8s-schemas.mjs';

export { root };
export const toolsDir = path.join(root, '.herald', 'tools');
export const chartDir = path.join(root, 'charts', 'herald');
export const k8sDir = path.join(root, 'k8s');
// `helm template` release name for k8s/ and the checks: resources are named herald-<process>
export const RELEASE = 'herald';
// The default values alone refuse to install: they name no image registry, and the public
// Ingress has no TLS while ingress.requireTls is on (the chart cases check both refusals). What
// is rendered "with the defaults" here, k8s/ included, names the registry `registry.invalid` (a
// name that never resolves: whoever applies k8s/ replaces it with kustomize `images:`) and turns
// the TLS switch off: the plain manifests leave the Ingress's host and TLS to whoever applies them.
export const PLACEHOLDER_REGISTRY = 'registry.invalid';
export const DEFAULTS = [
  '--set',
  `image.registry=${PLACEHOLDER_REGISTRY}`,
  '--set',
  'ingress.requireTls=false',
];
export const DEFAULTS_SCENARIO =
  'default values, image.registry=registry.invalid, ingress.requireTls=false';
export const kubeVersionArgs = ['--kube-version', KUBERNETES_VERSION];

/**
 * Runs a program to completion; its stdout, or an error with its command line and output.
 * @param {string} command
 * @param {string[]} args
 * @param {{ input?: string, cwd?: string }} [options]
 * @returns {string}
 */
export function run(command, args, { input, cwd = root } = {}) {
  const result = spawnSync(command, args, {
    cwd,
    input,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(
      `${path.basename(command)} ${args.join(' ')}\n${result.stdout}${result.stderr}`,
    );
  }
  return result.stdout;
}
