// The version check on a chart of its own in a temporary folder:
// `node --test tools/k8s-lab/src/chart-check/versions.test.mjs`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { chartContentDigest, compareVersions, versionProblems } from './versions.mjs';

/** A repository with a chart at `version` and Herald at `appVersion`, its contents recorded. */
function repository({ version = '1.2.3', appVersion = '2.0.0', changelog = true } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-versions-'));
  const chartDir = path.join(root, 'charts', 'herald');
  fs.mkdirSync(path.join(chartDir, 'templates'), { recursive: true });
  fs.writeFileSync(
    path.join(chartDir, 'Chart.yaml'),
    `apiVersion: v2\nname: herald\nversion: ${version}\nappVersion: "${appVersion}"\n`,
  );
  fs.writeFileSync(path.join(chartDir, 'values.yaml'), 'replicas: 2\n');
  fs.writeFileSync(path.join(chartDir, 'templates', 'a.yaml'), 'kind: ConfigMap\n');
  fs.writeFileSync(path.join(chartDir, 'README.md'), '# the chart\n');
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ version: appVersion }));
  if (changelog) {
    fs.writeFileSync(
      path.join(root, 'CHANGELOG.md'),
      `# Changelog\n\n## [${appVersion}] - 2026-01-01\n\nHerald ${appVersion}, Chart ${version}.\n`,
    );
  }
  const files = {
    chartDir,
    packageJson: path.join(root, 'package.json'),
    changelog: path.join(root, 'CHANGELOG.md'),
    lockFile: path.join(root, 'charts', 'chart-versions.json'),
  };
  fs.writeFileSync(
    files.lockFile,
    JSON.stringify({ herald: { version, sha256: chartContentDigest(chartDir) } }),
  );
  /** @param {string} from  @param {string} to */
  const setChartVersion = (from, to) => {
    const file = path.join(chartDir, 'Chart.yaml');
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replace(`version: ${from}`, `version: ${to}`),
    );
  };
  return { root, chartDir, files, setChartVersion };
}

test('when nothing changed, then there is no problem', () => {
  const { files } = repository();
  assert.deepEqual(versionProblems(files).problems, []);
});

test('when a template changes and the chart version does not, then the check asks for a bump', () => {
  const { chartDir, files } = repository();
  fs.appendFileSync(path.join(chartDir, 'templates', 'a.yaml'), 'data: {}\n');
  const { problems } = versionProblems(files);
  assert.equal(problems.length, 1);
  assert.match(
    problems[0],
    /changed since chart version 1\.2\.3: raise `version` in herald\/Chart\.yaml/,
  );
});

test('when a value changes and the chart version goes down, then the check still asks for a bump', () => {
  const { chartDir, files, setChartVersion } = repository();
  fs.writeFileSync(path.join(chartDir, 'values.yaml'), 'replicas: 3\n');
  setChartVersion('1.2.3', '1.2.2');
  assert.match(versionProblems({ ...files, write: true }).problems.join('\n'), /raise `version`/);
});

test('when only the README or the tests change, then no bump is needed', () => {
  const { chartDir, files } = repository();
  fs.appendFileSync(path.join(chartDir, 'README.md'), 'More words.\n');
  fs.mkdirSync(path.join(chartDir, 'tests'));
  fs.writeFileSync(path.join(chartDir, 'tests', 'a_test.yaml'), 'suite: a\n');
  assert.deepEqual(versionProblems(files).problems, []);
});

test('when the contents change with a new chart version, then --write records it and the check passes', () => {
  const { chartDir, files, setChartVersion } = repository();
  fs.appendFileSync(path.join(chartDir, 'templates', 'a.yaml'), 'data: {}\n');
  setChartVersion('1.2.3', '1.3.0');
  fs.appendFileSync(files.changelog, '\nChart 1.3.0 adds data.\n');
  assert.match(versionProblems(files).problems.join('\n'), /chart version 1\.3\.0 is new: record/);
  assert.deepEqual(versionProblems({ ...files, write: true }).problems, []);
  assert.equal(JSON.parse(fs.readFileSync(files.lockFile, 'utf8')).herald.version, '1.3.0');
  assert.deepEqual(versionProblems(files).problems, []);
});

test('when appVersion differs from package.json, or the changelog lacks the versions, then each is a problem', () => {
  const { files } = repository({ appVersion: '2.0.0', changelog: false });
  fs.writeFileSync(files.packageJson, JSON.stringify({ version: '2.1.0' }));
  const problems = versionProblems(files).problems.join('\n');
  assert.match(problems, /appVersion is 2\.0\.0 but package\.json's version is 2\.1\.0/);
  assert.match(problems, /no section "## \[2\.1\.0\]"/);
  assert.match(problems, /does not name chart version 1\.2\.3/);
});

test('when a version is not semantic, then it is refused', () => {
  const { files } = repository({ version: '1.2' });
  assert.match(
    versionProblems(files).problems.join('\n'),
    /Chart\.yaml version must be a semantic version/,
  );
});

test('semantic versions compare by number, and a pre-release is lower than its release', () => {
  assert.equal(compareVersions('1.10.0', '1.9.9'), 1);
  assert.equal(compareVersions('1.0.0', '1.0.0'), 0);
  assert.equal(compareVersions('1.0.0-rc.1', '1.0.0'), -1);
  assert.equal(compareVersions('2.0.0', '10.0.0'), -1);
});
