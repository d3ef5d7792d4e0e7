// `node --test tools/stack/src/with-node24.test.mjs`: Node 24.11 is the floor everywhere. Every
// package.json that names an engine names it, every root npm script runs through
// with-node24.sh, and that script runs the command on the machine's node when it is new enough,
// else on Node 24 it installs (again, when an install was cut short) into the data folder. Its
// npm is a stand-in here that lays out what node-linux-<arch> would: no registry is asked.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { repoRoot } from './config.mjs';
import { NODE_FLOOR, meetsNodeFloor } from './node-version.mjs';

const wrapperRel = 'tools/stack/src/with-node24.sh';
const wrapper = path.join(repoRoot, wrapperRel);
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const rootPkg = readJson(path.join(repoRoot, 'package.json'));

/** The root package.json and every workspace package's. */
function packageFiles() {
  const files = [path.join(repoRoot, 'package.json')];
  for (const pattern of rootPkg.workspaces) {
    const parent = path.join(repoRoot, pattern.replace(/\/\*$/, ''));
    for (const name of fs.readdirSync(parent)) {
      const file = path.join(parent, name, 'package.json');
      if (fs.existsSync(file)) files.push(file);
    }
  }
  return files;
}

describe('the Node floor', () => {
  it('when a version is compared with the floor, then only 24.11.0 and later meet it', () => {
    assert.equal(NODE_FLOOR, '24.11.0');
    for (const v of ['v24.11.0', '24.11.0', 'v24.11.1', 'v24.22.3', 'v25.0.0', 'v100.0.0']) {
      assert.equal(meetsNodeFloor(v), true, v);
    }
    for (const v of ['v24.10.9', 'v24.0.0', 'v20.20.2', 'v9.99.99', 'v2.11.0', '', 'garbage']) {
      assert.equal(meetsNodeFloor(v), false, v);
    }
  });

  it('when a package.json names an engine, then it is the floor (the root and the SDK must)', () => {
    const floor = NODE_FLOOR.replace(/\.0$/, '');
    const named = [];
    for (const file of packageFiles()) {
      const engine = readJson(file).engines?.node;
      if (engine === undefined) continue;
      named.push(path.relative(repoRoot, file));
      assert.equal(engine, `>=${floor}`, path.relative(repoRoot, file));
    }
    assert.ok(named.includes('package.json'), 'the root package.json names no node engine');
    assert.ok(named.includes('libs/client/package.json'), 'the SDK names no node engine');
  });

  it("when the types of Node's API are installed, then they are of the floor's major", () => {
    assert.match(rootPkg.devDependencies['@types/node'], /^\^24\./);
  });

  it("when the images name their Node, then every one names the stand-in's, which meets the floor", () => {
    const read = (rel) => fs.readFileSync(path.join(repoRoot, rel), 'utf8');
    const standIn = /NODE_VERSION = '([\d.]+)'/.exec(
      read('tools/k8s-lab/src/images/base.mjs'),
    )?.[1];
    assert.ok(standIn && meetsNodeFloor(standIn), `tools/k8s-lab/src/images/base.mjs: ${standIn}`);
    const sources = ['tools/generate/src/dockerfile.mjs'];
    for (const name of fs.readdirSync(path.join(repoRoot, 'services'))) {
      if (fs.existsSync(path.join(repoRoot, 'services', name, 'Dockerfile')))
        sources.push(`services/${name}/Dockerfile`);
    }
    for (const rel of sources) {
      const tags = [...read(rel).matchAll(/\bnode:([\w.-]+)@sha256:/g)].map((m) => m[1]);
      assert.ok(tags.length > 0, `${rel} names no node image`);
      for (const tag of tags) assert.equal(tag, `${standIn}-bookworm-slim`, rel);
    }
  });

  it('when with-node24.sh compares versions, then its floor is NODE_FLOOR', () => {
    const text = fs.readFileSync(wrapper, 'utf8');
    const part = (name) => new RegExp(`^FLOOR_${name}=(\\d+)$`, 'm').exec(text)?.[1];
    const floor = ['MAJOR', 'MINOR', 'PATCH'].map(part).join('.');
    assert.equal(floor, NODE_FLOOR);
  });

  it('when a root npm script runs a command, then it runs through with-node24.sh', () => {
    for (const [name, script] of Object.entries(rootPkg.scripts)) {
      for (const command of script.split(/\s*(?:&&|\|\||;)\s*/)) {
        assert.ok(command.startsWith(`sh ${wrapperRel} `), `${name}: ${command}`);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// with-node24.sh itself, with a stand-in node on PATH and a stand-in npm

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-with-node24-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));
const packageName = `node-linux-${process.arch}`;
const installedVersion = 'v24.22.3';

function script(file, body) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
}

const fakeNode = (file, version) => script(file, `echo ${version}`);

// Logs its arguments; fails the first $FAKE_NPM_FAILS calls; else lays out the package at --prefix.
const fakeNpm = `echo "$*" >>"$FAKE_NPM_LOG"
n=$(wc -l <"$FAKE_NPM_LOG")
[ "$n" -gt "\${FAKE_NPM_FAILS:-0}" ] || exit 1
while [ $# -gt 0 ]; do
  case $1 in --prefix) prefix=$2; shift ;; node-linux-*) spec=$1 ;; esac
  shift
done
bin="$prefix/node_modules/\${spec%@*}/bin"
mkdir -p "$bin" && printf '#!/bin/sh\\necho ${installedVersion}\\n' >"$bin/node" && chmod +x "$bin/node"`;

let cases = 0;
/** A folder with a stand-in node of `version` (none when null) and npm, and a data folder. */
function setup(version, { failures = 0 } = {}) {
  const dir = path.join(scratch, `case-${(cases += 1)}`);
  if (version !== null) fakeNode(path.join(dir, 'bin', 'node'), version);
  script(path.join(dir, 'bin', 'npm'), fakeNpm);
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'npm.log');
  fs.writeFileSync(log, '');
  const env = {
    PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin`,
    HERALD_DATA_DIR: data,
    FAKE_NPM_LOG: log,
    FAKE_NPM_FAILS: String(failures),
    NODE: '/usr/bin/node',
  };
  const toolchainNode = path.join(
    data,
    'toolchain',
    'node24',
    'node_modules',
    packageName,
    'bin',
    'node',
  );
  const npmCalls = () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return { dir, env, data, toolchainNode, npmCalls };
}

/** Runs the wrapper on a command that prints which node it finds, its version and $NODE. */
function runWrapped(env, file = wrapper) {
  const r = spawnSync(
    '/bin/sh',
    [file, '/bin/sh', '-c', 'printf "%s|%s|%s" "$(command -v node)" "$(node --version)" "$NODE"'],
    { env, encoding: 'utf8', timeout: 30000 },
  );
  const [node, version, nodeVar] = r.stdout.split('|');
  return { status: r.status, stderr: r.stderr, node, version, nodeVar };
}

describe('with-node24.sh', () => {
  it("when the machine's node meets the floor, then the command runs on it and nothing is installed", () => {
    for (const version of ['v24.11.0', 'v24.22.3', 'v25.1.0']) {
      const c = setup(version);
      const r = runWrapped(c.env);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.node, path.join(c.dir, 'bin', 'node'));
      assert.equal(r.version, version);
      assert.equal(r.nodeVar, '/usr/bin/node');
      assert.deepEqual(c.npmCalls(), []);
      assert.equal(fs.existsSync(c.data), false);
    }
  });

  it("when the machine's node is older, then Node 24 is installed into the data folder and runs the command", () => {
    for (const version of ['v20.20.2', 'v24.10.9', 'not a version']) {
      const c = setup(version);
      const r = runWrapped(c.env);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.node, c.toolchainNode);
      assert.equal(r.version, installedVersion);
      assert.equal(r.nodeVar, c.toolchainNode, 'npm’s $NODE names the node that runs');
      const calls = c.npmCalls();
      assert.equal(calls.length, 1);
      assert.match(calls[0], new RegExp(`^install .*--ignore-scripts.* ${packageName}@24$`));
      assert.deepEqual(fs.readdirSync(path.join(c.data, 'toolchain')), ['node24']);
    }
  });

  it('when Node 24 is installed already, then it runs the command without another install', () => {
    const c = setup('v20.20.2');
    fakeNode(c.toolchainNode, 'v24.21.0');
    const r = runWrapped(c.env);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.node, c.toolchainNode);
    assert.equal(r.version, 'v24.21.0');
    assert.deepEqual(c.npmCalls(), []);
  });

  it('when an install was cut short (a node that does not run), then it is installed again', () => {
    for (const body of ['exit 1', 'echo v24.2']) {
      const c = setup('v20.20.2');
      script(c.toolchainNode, body);
      const r = runWrapped(c.env);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.version, installedVersion);
      assert.equal(c.npmCalls().length, 1);
      assert.match(r.stderr, /does not run .* installing it again/);
    }
  });

  it('when an install fails once, then it is tried once more; twice, then nothing runs', () => {
    const once = setup('v20.20.2', { failures: 1 });
    const r = runWrapped(once.env);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.version, installedVersion);
    assert.equal(once.npmCalls().length, 2);

    const twice = setup('v20.20.2', { failures: 2 });
    const failed = runWrapped(twice.env);
    assert.equal(failed.status, 1);
    assert.equal(failed.version, undefined, 'the command must not run on the old node');
    assert.match(failed.stderr, /could not install/);
    assert.deepEqual(fs.readdirSync(path.join(twice.data, 'toolchain')), []);
  });

  it('when the checkout sits deep, under names with spaces, then the data folder is found from its root', () => {
    const root = path.join(scratch, 'a deep', ...'abcdefghijklmnop'.split(''), 'the checkout');
    const copy = path.join(root, wrapperRel);
    fs.mkdirSync(path.dirname(copy), { recursive: true });
    fs.copyFileSync(wrapper, copy);
    const c = setup('v20.20.2');
    const env = { ...c.env };
    delete env.HERALD_DATA_DIR;
    for (const [dataDir, folder] of [
      [undefined, '.herald'],
      ['.herald-second', '.herald-second'],
    ]) {
      if (dataDir === undefined) delete env.HERALD_DATA_DIR;
      else env.HERALD_DATA_DIR = dataDir;
      const r = runWrapped(env, copy);
      assert.equal(r.status, 0, r.stderr);
      const expected = path.join(root, folder, 'toolchain', 'node24', 'node_modules', packageName);
      assert.equal(r.node, path.join(expected, 'bin', 'node'));
      assert.equal(r.version, installedVersion);
    }
  });
});
