// Versions: Herald's own (package.json `version`, which the chart's `appVersion` repeats) and the
// chart's (Chart.yaml `version`), both semantic versions, each with its section in CHANGELOG.md.
// A change to what the chart installs (templates, values, schema, files, dashboards, Chart.yaml)
// must come with a new chart version: charts/chart-versions.json records a digest of those
// contents for the chart version that last changed them, and the check fails when the contents
// differ while the version does not. A digest kept in the repository, not a diff against another
// branch (as helm's chart-testing does it), so that the check needs no remote, works in a
// shallow clone and means the same thing on every commit.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** What the chart installs; its README, unit tests and CI values are left out. */
const CONTENTS = [
  'Chart.yaml',
  'values.yaml',
  'values.schema.json',
  'templates',
  'files',
  'dashboards',
];

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$/;

/**
 * A field of Chart.yaml (top-level scalars only), its quotes removed.
 * @param {string} chartYaml
 * @param {string} field
 */
export function chartField(chartYaml, field) {
  const match = new RegExp(`^${field}:\\s*(.+?)\\s*$`, 'm').exec(chartYaml);
  return match ? match[1].replace(/^["']|["']$/g, '') : null;
}

/**
 * -1, 0 or 1 as semantic version `a` is lower, equal or higher than `b` (pre-release parts
 * compared as text, and lower than the release).
 * @param {string} a
 * @param {string} b
 */
export function compareVersions(a, b) {
  const parse = (/** @type {string} */ v) => {
    const [core, pre = ''] = v.split(/-(.*)/s);
    return { parts: core.split('.').map(Number), pre };
  };
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < 3; i += 1) {
    if (x.parts[i] !== y.parts[i]) return x.parts[i] < y.parts[i] ? -1 : 1;
  }
  if (x.pre === y.pre) return 0;
  if (!x.pre) return 1;
  if (!y.pre) return -1;
  return x.pre < y.pre ? -1 : 1;
}

/**
 * The digest of what the chart installs: every file of CONTENTS, by relative path, with
 * Chart.yaml's own `version:` line left out (the digest is what the version names).
 * @param {string} chartDir
 */
export function chartContentDigest(chartDir) {
  const hash = createHash('sha256');
  /** @type {string[]} */
  const files = [];
  for (const entry of CONTENTS) {
    const full = path.join(chartDir, entry);
    if (!fs.existsSync(full)) continue;
    if (fs.statSync(full).isFile()) files.push(entry);
    else {
      for (const f of fs.readdirSync(full, { recursive: true, withFileTypes: true })) {
        if (f.isFile()) files.push(path.relative(chartDir, path.join(f.parentPath, f.name)));
      }
    }
  }
  for (const file of files.sort()) {
    let text = fs.readFileSync(path.join(chartDir, file), 'utf8');
    if (file === 'Chart.yaml') text = text.replace(/^version:.*$/m, '');
    hash.update(`${file}\0${text}\0`);
  }
  return hash.digest('hex');
}

/**
 * What is wrong with the versions, as sentences that say what to do; none when all is well.
 * With `write`, a chart version that was raised for changed contents is recorded in `lockFile`.
 * @param {{ chartDir: string, packageJson: string, changelog: string, lockFile: string,
 *   write?: boolean }} files
 * @returns {{ problems: string[], chartVersion: string | null, appVersion: string | null }}
 */
export function versionProblems({ chartDir, packageJson, changelog, lockFile, write = false }) {
  /** @type {string[]} */
  const problems = [];
  const chartYaml = fs.readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8');
  const chartVersion = chartField(chartYaml, 'version');
  const chartAppVersion = chartField(chartYaml, 'appVersion');
  /** @type {{ version?: string }} */
  const pkg = JSON.parse(fs.readFileSync(packageJson, 'utf8'));
  const appVersion = pkg.version ?? null;
  for (const [what, version] of [
    [`${path.basename(chartDir)}/Chart.yaml version`, chartVersion],
    ['package.json version', appVersion],
  ]) {
    if (!version || !SEMVER.test(version)) {
      problems.push(`${what} must be a semantic version (MAJOR.MINOR.PATCH), not ${version}`);
    }
  }
  if (chartAppVersion !== appVersion) {
    problems.push(
      `Chart.yaml appVersion is ${chartAppVersion} but package.json's version is ${appVersion}: they name the same release`,
    );
  }
  const log = fs.existsSync(changelog) ? fs.readFileSync(changelog, 'utf8') : '';
  if (appVersion && !new RegExp(`^## \\[${appVersion.replace(/\./g, '\\.')}\\]`, 'm').test(log)) {
    problems.push(`CHANGELOG.md has no section "## [${appVersion}]" for Herald's version`);
  }
  if (chartVersion && !log.includes(`Chart ${chartVersion}`)) {
    problems.push(
      `CHANGELOG.md does not name chart version ${chartVersion} ("Chart ${chartVersion}")`,
    );
  }

  const name = path.basename(chartDir);
  /** @type {Record<string, { version: string, sha256: string }>} */
  const lock = fs.existsSync(lockFile) ? JSON.parse(fs.readFileSync(lockFile, 'utf8')) : {};
  const recorded = lock[name];
  const digest = chartContentDigest(chartDir);
  if (chartVersion && recorded?.sha256 !== digest) {
    if (recorded && compareVersions(chartVersion, recorded.version) <= 0) {
      problems.push(
        `the chart's templates or values changed since chart version ${recorded.version}: raise ` +
          `\`version\` in ${name}/Chart.yaml (a patch for a fix, a minor for a new value, a major ` +
          `for a change that needs an upgrade note in CHANGELOG.md), then record it with ` +
          `\`node tools/k8s-lab/src/chart-check/main.mjs --write\``,
      );
    } else if (write) {
      lock[name] = { version: chartVersion, sha256: digest };
      fs.writeFileSync(lockFile, `${JSON.stringify(lock, null, 2)}\n`);
    } else {
      problems.push(
        `chart version ${chartVersion} is new: record its contents with ` +
          '`node tools/k8s-lab/src/chart-check/main.mjs --write`',
      );
    }
  }
  return { problems, chartVersion, appVersion };
}
