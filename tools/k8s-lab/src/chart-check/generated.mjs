// The files the chart check generates and keeps in sync (`--write` rewrites them): k8s/, the
// default rendering split by template, and the table of values in the chart's README.
import fs from 'node:fs';
import path from 'node:path';
import { chartDir, k8sDir } from './chart.mjs';
import { yamlDocument } from './helm-json.mjs';
import { valuesTable, withValuesTable } from './values-doc.mjs';

// kubectl and kustomize apply in this order: identities and config before the pods
const ORDER = [
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

/**
 * `k8s/<template>.yaml` for each template of the default rendering, plus a kustomization.
 * @param {string} rendering the output of `helm template`
 * @returns {Record<string, string>} file name to content
 */
export function k8sFiles(rendering) {
  /** @type {Map<string, string[]>} */
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
  /** @type {Record<string, string>} */
  const files = {};
  for (const [template, docs] of byTemplate) {
    files[template] = `${header}${docs.map((d) => `---\n${d}\n`).join('')}`;
  }
  const names = Object.keys(files).sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
  const unknown = names.filter((n) => !ORDER.includes(n));
  if (unknown.length > 0) throw new Error(`place ${unknown.join(', ')} in the k8s/ order`);
  files['kustomization.yaml'] =
    `${header}apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n` +
    names.map((n) => `  - ${n}\n`).join('');
  return files;
}

/**
 * k8s/ holds exactly `expected`: written with `write`, else an error naming what differs.
 * @param {Record<string, string>} expected
 * @param {boolean} write
 */
export function syncK8s(expected, write) {
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

/**
 * The chart README's table of values is the one values.schema.json and values.yaml make:
 * written with `write`, else an error when it differs.
 * @param {string} helm
 * @param {boolean} write
 */
export function syncReadme(helm, write) {
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
