// Install scripts of dependencies: every one in package-lock.json reviewed, none run by npm (the
// root .npmrc, which the image builds copy), and Scarf's install analytics off.
// `node --test tools/generate/src/supply-chain/install-scripts.test.mjs`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { instructions } from '@herald/k8s-lab/images/dockerfile.mjs';
import {
  REVIEWED_FILE,
  checkInstallScripts,
  describeProblems,
  installScriptPackages,
  readReviewed,
} from './install-scripts.mjs';
import { repoRoot } from '@herald/stack/config.mjs';

const readJson = (file) => JSON.parse(fs.readFileSync(path.join(repoRoot, file), 'utf8'));
const listFile = path.relative(repoRoot, REVIEWED_FILE);

/** A lockfile as npm writes it (version 3), with the given packages besides the root. */
function lockfile(packages) {
  return {
    name: 'fixture',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: 'fixture', workspaces: ['libs/*'] }, ...packages },
  };
}

const REVIEWED = { packages: { argon2: { why: 'ships prebuilt binaries' } } };

test('every package with an install script in package-lock.json is on the reviewed list', () => {
  const result = checkInstallScripts(readJson('package-lock.json'), readReviewed());
  assert.deepEqual(describeProblems(result, listFile), []);
  assert.ok(result.found.size > 0, 'the lockfile has install scripts to review');
});

test('a lockfile with an unreviewed install-script package fails the check', () => {
  const result = checkInstallScripts(
    lockfile({
      'node_modules/argon2': { version: '0.45.1', hasInstallScript: true },
      'node_modules/left-pad': { version: '1.3.0' },
      'node_modules/a/node_modules/@evil/postinstall': { version: '6.6.6', hasInstallScript: true },
      'libs/tool': { name: '@fixture/tool', version: '0.1.0', hasInstallScript: true },
      'node_modules/@fixture/tool': { resolved: 'libs/tool', link: true },
    }),
    REVIEWED,
  );
  assert.deepEqual(
    result.unreviewed.map((u) => u.name),
    ['@evil/postinstall', '@fixture/tool'],
  );
  assert.deepEqual(describeProblems(result, listFile), [
    '@evil/postinstall@6.6.6 (node_modules/a/node_modules/@evil/postinstall) has an install ' +
      `script and is not in ${listFile}: check that it works without the script (npm runs none ` +
      'here), then add it with the reason',
    `@fixture/tool@0.1.0 (libs/tool) has an install script and is not in ${listFile}: check ` +
      'that it works without the script (npm runs none here), then add it with the reason',
  ]);
});

test('a reviewed package is found wherever it is installed, and once', () => {
  const found = installScriptPackages(
    lockfile({
      'node_modules/argon2': { version: '0.45.1', hasInstallScript: true },
      'node_modules/x/node_modules/argon2': { version: '0.40.0', hasInstallScript: true },
    }),
  );
  assert.deepEqual([...found.keys()], ['argon2']);
  assert.deepEqual(found.get('argon2').versions, ['0.45.1', '0.40.0']);
  const result = checkInstallScripts(
    lockfile({ 'node_modules/argon2': { version: '0.45.1', hasInstallScript: true } }),
    REVIEWED,
  );
  assert.deepEqual(describeProblems(result), []);
});

test('a reviewed package that no longer has an install script is reported', () => {
  const result = checkInstallScripts(lockfile({ 'node_modules/argon2': {} }), REVIEWED);
  assert.deepEqual(describeProblems(result, 'the list'), [
    'argon2 is in the list but no longer has an install script in the lockfile',
  ]);
});

test('the reviewed list gives a reason for each package; an old lockfile is refused', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-install-scripts-'));
  try {
    const file = path.join(dir, 'list.json');
    fs.writeFileSync(file, JSON.stringify({ packages: { argon2: { why: ' ' }, b: {} } }));
    assert.throws(() => readReviewed(file), /argon2: no "why"; b: no "why"/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(
    () => installScriptPackages({ lockfileVersion: 1, dependencies: {} }),
    /lockfileVersion 2 or 3/,
  );
});

test('npm reads ignore-scripts=true from the root .npmrc', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-npmrc-'));
  const [user, global] = ['user', 'global'].map((name) => path.join(dir, name));
  for (const file of [user, global]) fs.writeFileSync(file, '');
  // only the project's .npmrc: no npm_config_* of a calling npm, no user or global npmrc
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^npm_config_/i.test(key)),
  );
  const npm = spawnSync('npm', ['config', 'get', 'ignore-scripts'], {
    cwd: repoRoot,
    env: { ...env, npm_config_userconfig: user, npm_config_globalconfig: global },
    encoding: 'utf8',
  });
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(npm.status, 0, npm.stderr);
  assert.equal(npm.stdout.trim(), 'true');
});

test('each image build has the root .npmrc before its first npm command', () => {
  const dir = path.join(repoRoot, 'services');
  const files = fs
    .readdirSync(dir)
    .map((name) => path.join('services', name, 'Dockerfile'))
    .filter((file) => fs.existsSync(path.join(repoRoot, file)));
  assert.ok(files.length >= 4);
  for (const file of files) {
    /** stage name → whether it has .npmrc; the current stage's state */
    const stages = new Map();
    let has = false;
    let npmRuns = 0;
    for (const { keyword, text, line } of instructions(
      fs.readFileSync(path.join(repoRoot, file), 'utf8'),
    )) {
      const words = text.split(/\s+/);
      if (keyword === 'FROM') {
        const operands = words.slice(1).filter((w) => !w.startsWith('--'));
        has = stages.get(operands[0].toLowerCase()) ?? false;
        if (operands[1]?.toUpperCase() === 'AS') stages.set(operands[2].toLowerCase(), has);
        continue;
      }
      if ((keyword === 'COPY' || keyword === 'ADD') && !text.includes('--from=')) {
        if (words.slice(1, -1).some((w) => w === '.npmrc' || w === './.npmrc')) has = true;
      }
      if (keyword === 'RUN' && /\bnp[mx]\b/.test(text)) {
        npmRuns += 1;
        assert.ok(has, `${file} line ${line}: npm runs before COPY of .npmrc`);
      }
      const last = [...stages.keys()].at(-1);
      if (last !== undefined) stages.set(last, has);
    }
    assert.ok(npmRuns > 0, `${file} runs npm`);
  }
});

test('the root package.json turns Scarf install analytics off', () => {
  assert.deepEqual(readJson('package.json').scarfSettings, { enabled: false });
});

test("Scarf's own postinstall, run for an install at the root, reports nothing", async (t) => {
  const lock = readJson('package-lock.json');
  const key = Object.keys(lock.packages).find((k) => k.endsWith('node_modules/@scarf/scarf'));
  const reportJs = key && path.join(repoRoot, key, 'report.js');
  if (!reportJs || !fs.existsSync(reportJs)) {
    t.skip('@scarf/scarf is not installed');
    return;
  }
  // Anything it sends goes to this loopback server (SCARF_LOCAL_PORT), not to scarf.sh.
  const received = [];
  const server = http.createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    res.end();
  });
  await /** @type {Promise<void>} */ (
    new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  );
  const saved = { ...process.env };
  try {
    // Only the root package.json may turn it off here, not the caller's environment.
    for (const name of [
      'SCARF_ANALYTICS',
      'SCARF_NO_ANALYTICS',
      'DO_NOT_TRACK',
      'SCARF_API_TOKEN',
    ]) {
      delete process.env[name];
    }
    const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
    process.env.SCARF_LOCAL_PORT = String(port);
    process.env.INIT_CWD = repoRoot; // what npm sets for the scripts of an install at the root
    const scarf = createRequire(import.meta.url)(reportJs);
    // Scarf's own `npm ls` has a 3 s timeout, which a busy machine exceeds (it then reports
    // nothing, for the wrong reason): the same command without it, read by Scarf's own parser.
    scarf.getDependencyInfo = () =>
      new Promise((resolve, reject) => {
        const ls = spawnSync('npm', ['ls', '@scarf/scarf', '--json', '--long'], {
          cwd: repoRoot,
          encoding: 'utf8',
          maxBuffer: 256 * 1024 * 1024,
        });
        scarf.processDependencyTreeOutput(resolve, reject)(
          ls.status === 0 ? null : new Error(ls.stderr),
          ls.stdout,
          ls.stderr,
        );
      });
    await assert.rejects(
      scarf.reportPostInstall(),
      /disabled via a package\.json|opted out/,
      'Scarf must decide not to report',
    );
    assert.deepEqual(received, []);
  } finally {
    process.env = saved;
    server.close();
  }
});
