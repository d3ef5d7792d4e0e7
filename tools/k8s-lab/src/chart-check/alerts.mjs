// The chart check's steps for the alert rules: one source (charts/herald/files/alerts.yaml), two
// renderings (the chart's PrometheusRule, the plain rules file of
// tools/observability/src/alert-rules.mjs) holding the same rules, both checked and unit-tested
// with promtool.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { chartDir, DEFAULTS, kubeVersionArgs, RELEASE, run } from './chart.mjs';
import { yamlDocument, yamlDocuments } from './helm-json.mjs';
import { step } from './steps.mjs';

const alertTestsDir = path.join(chartDir, 'tests', 'alerts');
// The namespace the PrometheusRule is rendered in here; the alerts' unit tests name it in their
// series, so that they select the same series under both renderings.
const ALERT_NAMESPACE = 'herald';

/**
 * A Prometheus rule group, as the rules file and the PrometheusRule's spec hold it.
 * @typedef {{ name: string, rules: Rule[] }} RuleGroup
 */
/** @typedef {{ alert?: string, record?: string, [field: string]: unknown }} Rule */

/**
 * The three steps. The folders promtool reads, one per rendering: `<scratch>/<rendering>/rules.yaml`,
 * as the unit tests name it.
 * @param {{ helm: string, promtool: string }} tools
 */
export async function alertRuleSteps(tools) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-alert-rules-'));
  process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));
  const renderings = { plain: path.join(scratch, 'plain'), chart: path.join(scratch, 'chart') };
  /** @type {RuleGroup[] | undefined} */
  let groups;

  await step(
    'alert rules: the PrometheusRule and the plain rules file hold the same rules',
    async () => {
      groups = await writeSameRules(tools.helm, renderings);
      return `${groups.length} groups, ${ruleNames(groups).length} alerts`;
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
    return testRules(tools, renderings, groups);
  });
}

/**
 * Renders both and writes each rendering's rules.yaml; throws where they differ. Returns the
 * PrometheusRule's groups.
 * @param {string} helm
 * @param {{ plain: string, chart: string }} renderings
 * @returns {Promise<RuleGroup[]>}
 */
async function writeSameRules(helm, renderings) {
  const { renderAlertRules, writeAlertRules } =
    await import('@herald/observability/alert-rules.mjs');
  const rendering = run(helm, [
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
  const [rule] = yamlDocuments(helm, rendering);
  const chartGroups = rule.spec.groups;
  // the module given the chart's release (its fullname is "herald" too): the same text
  const scoped = yamlDocument(
    helm,
    await renderAlertRules({ namespace: ALERT_NAMESPACE, fullname: RELEASE }),
  ).groups;
  const problem = firstDifference(chartGroups, scoped);
  if (problem) throw new Error(`helm template vs alert-rules.mjs (same release): ${problem}`);
  // the file writeAlertRules writes for a Prometheus outside Kubernetes: the same rules, but
  // for the label matchers of their expressions
  const plainFile = path.join(renderings.plain, 'rules.yaml');
  await writeAlertRules(plainFile);
  const plain = yamlDocument(helm, fs.readFileSync(plainFile, 'utf8')).groups;
  const plainProblem = firstDifference(chartGroups, plain, ['expr']);
  if (plainProblem) throw new Error(`helm template vs writeAlertRules: ${plainProblem}`);
  fs.mkdirSync(renderings.chart);
  // JSON is YAML: promtool reads the PrometheusRule's groups as they are
  fs.writeFileSync(
    path.join(renderings.chart, 'rules.yaml'),
    JSON.stringify({ groups: chartGroups }),
  );
  return chartGroups;
}

/**
 * `promtool test rules` on both renderings, once every alert is shown firing and silent.
 * @param {{ helm: string, promtool: string }} tools
 * @param {{ plain: string, chart: string }} renderings
 * @param {RuleGroup[]} groups
 */
function testRules(tools, renderings, groups) {
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
    const suite = yamlDocument(tools.helm, fs.readFileSync(path.join(alertTestsDir, file), 'utf8'));
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
    for (const file of files) fs.copyFileSync(path.join(alertTestsDir, file), path.join(dir, file));
    run(tools.promtool, ['test', 'rules', ...files], { cwd: dir });
  }
  return `${tests} tests in ${files.length} files, every alert firing and silent, on both renderings`;
}

/**
 * Each rule of `groups` as `<group>/<alert>`, for messages.
 * @param {RuleGroup[]} groups
 */
function ruleNames(groups) {
  return groups.flatMap((g) => g.rules.map((r) => `${g.name}/${r.alert ?? r.record}`));
}

/**
 * Where two lists of groups first differ (group names, rule order, then one rule's fields).
 * @param {RuleGroup[]} expected
 * @param {RuleGroup[]} actual
 * @param {string[]} [ignore] fields of a rule left out of the comparison
 * @returns {string | null}
 */
function firstDifference(expected, actual, ignore = []) {
  /** @param {Rule} rule */
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
