// `node --test tools/observability/src/alert-rules.test.mjs` (run by `npm test`): the plain
// rendering of Herald's alert rules. The chart check compares it with `helm template` and runs
// promtool on it; these tests hold what neither checks: the renderer refuses what Helm would
// read differently, every alert names metrics of the catalogue (docs/metrics.md) and has its
// runbook, and writeAlertRules writes a file a Prometheus can load.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import YAML from 'yaml';
import {
  alertScope,
  goValue,
  renderAlertRules,
  renderTemplate,
  writeAlertRules,
} from './alert-rules.mjs';
import { repoRoot as root } from '@herald/stack/config.mjs';
import { SLOS, checkedSlos } from './slos.mjs';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-alert-rules-test-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

const rules = async (release) =>
  YAML.parse(await renderAlertRules(release)).groups.flatMap((g) => g.rules);

test('when rendered plainly, then every rule is an alert with severity, summary, description and runbook', async () => {
  const alerts = await rules();
  assert.ok(alerts.length >= 9);
  for (const rule of alerts) {
    assert.match(rule.alert, /^Herald[A-Za-z0-9]+$/);
    assert.ok(['critical', 'warning'].includes(rule.labels?.severity), rule.alert);
    assert.ok(rule.annotations?.summary, `${rule.alert} has a summary`);
    assert.ok(rule.annotations?.description, `${rule.alert} has a description`);
    assert.equal(rule.annotations.runbook_url, `docs/runbooks/${rule.alert}.md`);
    assert.match(rule.for, /^\d+m$/);
  }
  // One name per alert, except the error-budget burns: one name, told apart by their labels.
  const identity = (r) =>
    r.alert === 'HeraldErrorBudgetBurn'
      ? `${r.alert} ${r.labels.slo} ${r.labels.sli} ${r.labels.window}`
      : r.alert;
  assert.equal(new Set(alerts.map(identity)).size, alerts.length, 'alerts are told apart');
});

test('when the objectives are rendered, then each objective and indicator has a 1 h and a 6 h burn alert', async () => {
  const burns = (await rules()).filter((r) => r.alert === 'HeraldErrorBudgetBurn');
  const expected = SLOS.flatMap((slo) =>
    ['availability', 'latency'].flatMap((sli) =>
      ['1h', '6h'].map((w) => `${slo.name} ${sli} ${w}`),
    ),
  );
  assert.deepEqual(
    burns.map((r) => `${r.labels.slo} ${r.labels.sli} ${r.labels.window}`).sort(),
    expected.sort(),
  );
  assert.deepEqual(
    burns.filter((r) => r.labels.window === '1h').map((r) => r.labels.severity),
    Array(SLOS.length * 2).fill('critical'),
  );
});

test('when an objective names a latency that is no bucket boundary, then it is refused', () => {
  const slo = { ...SLOS[0], latency: { seconds: 0.3, ratio: 0.99 } };
  assert.throws(() => checkedSlos([slo]), /0.3 s is not a bucket boundary/);
  assert.throws(() => checkedSlos([SLOS[0], SLOS[0]]), /defined twice/);
});

test('when an alert exists, then its runbook exists and the runbook index and metrics.md link it', async () => {
  const index = fs.readFileSync(path.join(root, 'docs', 'runbooks', 'README.md'), 'utf8');
  const metrics = fs.readFileSync(path.join(root, 'docs', 'metrics.md'), 'utf8');
  assert.match(metrics, /\(runbooks\/README\.md\)/);
  for (const { alert } of await rules()) {
    const runbook = path.join(root, 'docs', 'runbooks', `${alert}.md`);
    assert.ok(fs.existsSync(runbook), `${runbook} exists`);
    const text = fs.readFileSync(runbook, 'utf8');
    assert.match(text, new RegExp(`^# ${alert}\\n`));
    // What it means, how to confirm it, what to do: in that order, each with a body.
    const sections = [...text.matchAll(/^## (.+)\n([\s\S]*?)(?=^## |(?![\s\S]))/gm)];
    assert.deepEqual(
      sections.map((m) => m[1]),
      ['What it means', 'Confirm', 'What to do'],
      `${alert}.md sections`,
    );
    for (const [, title, body] of sections)
      assert.ok(body.trim().length > 40, `${alert}.md: ${title}`);
    assert.ok(index.includes(`(${alert}.md)`), `docs/runbooks/README.md links ${alert}.md`);
  }
});

/** The families docs/metrics.md lists, name to type (the first column of its tables). */
function catalogue() {
  const text = fs.readFileSync(path.join(root, 'docs', 'metrics.md'), 'utf8');
  const families = new Map();
  for (const [, name, type] of text.matchAll(/^\| `([a-z0-9_]+)` +\| (\w+) /gm)) {
    families.set(name, type);
  }
  return families;
}

test('when an expression names a metric, then docs/metrics.md lists it (or it is kube-state-metrics or up)', async () => {
  const families = catalogue();
  assert.ok(families.get('http_server_request_duration') === 'histogram', 'the catalogue parses');
  for (const rule of await rules()) {
    const names = [...rule.expr.matchAll(/([a-z_][a-z0-9_]*)\s*\{/g)].map((m) => m[1]);
    assert.ok(names.length > 0, rule.alert);
    for (const name of names) {
      // kube-state-metrics' series, and Prometheus's own scrape health
      if (name.startsWith('kube_') || name === 'up') continue;
      const histogram = /^(.*)_(bucket|count|sum)$/.exec(name);
      const listed =
        families.has(name) || (histogram && families.get(histogram[1]) === 'histogram');
      assert.ok(listed, `${rule.alert}: ${name} is not in docs/metrics.md`);
    }
  }
});

test('when rendered plainly, then Herald series are selected by job, scrape targets with the exporters; for a release, by its namespace and Services', async () => {
  const processes = ['events', 'auth', 'events-relay'];
  assert.deepEqual(alertScope(processes), {
    herald: 'job=~"auth|events|events-relay"',
    targets: 'job=~"auth|events|events-relay|kafka|nginx|postgres|redis"',
    pods: 'pod=~"herald-(auth|events|events-relay)-[bcdfghjklmnpqrstvwxz2456789]{1,10}-[bcdfghjklmnpqrstvwxz2456789]{5}"',
    deployments: 'deployment=~"herald-(auth|events|events-relay)"',
  });
  const release = alertScope(processes, { namespace: 'prod', fullname: 'eu-herald' });
  assert.equal(release.herald, 'namespace="prod",service=~"eu-herald-(auth|events|events-relay)"');
  assert.equal(release.targets, release.herald);
  assert.match(release.pods, /^namespace="prod",pod=~"eu-herald-\(/);
  assert.equal(
    release.deployments,
    'namespace="prod",deployment=~"eu-herald-(auth|events|events-relay)"',
  );
  const [plain] = await rules();
  assert.match(plain.expr, /\{ job=~"auth\|billing\|contacts\|events\|events-relay",/);
  assert.doesNotMatch(plain.expr, /namespace=/);
});

test('when a value is printed, then it reads as Helm prints it (float64, %v)', () => {
  assert.equal(goValue(0.05), '0.05');
  assert.equal(goValue(120), '120');
  assert.equal(goValue(999999), '999999');
  assert.equal(goValue(1000000), '1e+06');
  assert.equal(goValue(86400000), '8.64e+07');
  assert.equal(goValue(0.0001), '0.0001');
  assert.equal(goValue(0.000015), '1.5e-05');
  assert.equal(goValue(0), '0');
  assert.equal(goValue('5m'), '5m');
  assert.equal(goValue(true), 'true');
  assert.throws(() => goValue({ a: 1 }), /cannot print/);
});

test('when the template uses the three known actions, then they render; anything else is refused with its line', () => {
  const context = { Values: { a: { b: 0.5, s: '10m' } }, Scope: { herald: 'job="x"' } };
  assert.equal(
    renderTemplate('x{ {{ .Scope.herald }} } > {{ .Values.a.b }} for {{.Values.a.s}}', context),
    'x{ job="x" } > 0.5 for 10m',
  );
  assert.equal(renderTemplate('{{`{{ $labels.job }}`}}', context), '{{ $labels.job }}');
  /** @type {[string, RegExp][]} */
  const refused = [
    ['ok\n{{ include "x" . }}', /line 2: \{\{ include "x" \. \}\} is not one of the actions/],
    ['{{- .Values.a.b }}', /is not one of the actions/],
    ['{{ .Values.a.b | quote }}', /is not one of the actions/],
    ['{{/* a comment */}}', /is not one of the actions/],
    ['{{ .Release.Namespace }}', /is not one of the actions/],
    ['{{ .Values.a.missing }}', /\.Values\.a\.missing has no value/],
  ];
  for (const [template, error] of refused) {
    assert.throws(() => renderTemplate(template, context), error, template);
  }
});

test('when writeAlertRules is given a path in a missing folder, then it makes it and writes the plain rules', async () => {
  const file = path.join(scratch, 'prometheus', 'rules', 'herald.rules.yaml');
  await writeAlertRules(file);
  const text = fs.readFileSync(file, 'utf8');
  assert.equal(text, await renderAlertRules());
  assert.match(text, /^# Herald alerting rules, generated by/);
  assert.deepEqual(fs.readdirSync(path.dirname(file)), ['herald.rules.yaml']);
  await writeAlertRules(file);
  assert.equal(fs.readFileSync(file, 'utf8'), text, 'the same file again');
});
