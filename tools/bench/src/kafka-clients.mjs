// The Kafka clients kafka-publish compares with the relay's, installed on first use from the pinned
// manifest in tools/bench/kafka-clients into .herald/bench/kafka-clients, never into the
// workspace (CI would build librdkafka on every run). npm runs no install script there but
// @confluentinc/kafka-javascript's, which builds its bundled librdkafka from source (its prebuilt
// binary is downloaded from outside the npm registry). A client that cannot be installed or
// loaded is reported as such; the benchmark goes on with the others.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dataDir } from '@herald/stack/index.mjs';
import { run, which } from '@herald/stack/processes.mjs';

const MANIFEST_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'kafka-clients');
const MANIFEST_FILES = ['package.json', 'package-lock.json'];
export const CLIENTS_DIR = path.join(dataDir, 'bench', 'kafka-clients');
/** npm's and the native build's output, the last install's. */
const LOG = path.join(dataDir, 'bench', 'kafka-clients-install.log');
/** What an install left: the manifest and Node it was made for, its times, what failed. */
const STAMP = '.installed.json';
const CONFLUENT = '@confluentinc/kafka-javascript';
const PLATFORMATIC = '@platformatic/kafka';
const KAFKAJS = 'kafkajs';

/**
 * One client as loaded: its module, or why there is none.
 * @typedef {object} LoadedClient
 * @property {string} name the npm package
 * @property {string} version
 * @property {any} module null when not installed
 * @property {string} [reason] why it is not installed
 * @property {number | null} installSeconds this run's install time, null when reused
 */

/**
 * Whether `version` satisfies an `engines` range made of `>= x.y.z` alternatives joined by
 * `||` (the form the clients use); a range in another form counts as satisfied.
 * @param {string | undefined} range
 * @param {string} version e.g. process.versions.node
 */
export function satisfiesEngines(range, version) {
  if (!range) return true;
  const parse = (/** @type {string} */ v) => v.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const [major, minor, patch] = parse(version);
  const alternatives = range.split('||').map((a) => /^\s*>=\s*(\d+(?:\.\d+){0,2})\s*$/.exec(a));
  if (alternatives.some((m) => !m)) return true;
  return alternatives.some((m) => {
    const [a, b, c] = parse(m[1]);
    return major !== a ? major > a : minor !== b ? minor > b : patch >= c;
  });
}

/** The manifest's hash with this Node's version: a native build is only good for its Node. */
function stampOf() {
  const hash = createHash('sha256');
  for (const file of MANIFEST_FILES) hash.update(fs.readFileSync(path.join(MANIFEST_DIR, file)));
  return `${hash.digest('hex')} node ${process.version} ${process.arch}`;
}

/** @param {string} file */
function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** npm as this Node runs it, with the environment of a plain install (no `npm run` config). */
function npmCommand() {
  const fromRun = process.env.npm_execpath;
  const cli = fromRun?.endsWith('.js') ? fromRun : fs.realpathSync(which('npm') ?? 'npm');
  /** @type {NodeJS.ProcessEnv} */
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^npm_(config|package|lifecycle)_/i.test(k)) env[k] = v;
  }
  // Install scripts run `node`: this one, whose headers the native build needs.
  env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
  return { node: process.execPath, cli, env };
}

/** The folder holding this Node's headers (include/node), or undefined to let node-gyp look. */
function nodeHeaders() {
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(prefix, 'include', 'node', 'node_version.h')) ? prefix : undefined;
}

/**
 * npm ci of the manifest without install scripts, then @confluentinc/kafka-javascript's own
 * script alone, building librdkafka from its bundled source, linked dynamically against the
 * system's OpenSSL and zlib (`CKJS_LINKING=dynamic`; the static build downloads their sources).
 * @param {string} dir
 * @param {string} log
 */
async function install(dir, log) {
  const { node, cli, env } = npmCommand();
  const seconds = { npm: NaN, confluent: NaN };
  /** @type {Record<string, string>} */
  const failed = {};
  const started = Date.now();
  await run(node, [cli, 'ci', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: dir,
    env,
    appendTo: log,
    timeoutMs: 10 * 60_000,
  });
  seconds.npm = (Date.now() - started) / 1000;
  const nodedir = nodeHeaders();
  const buildEnv = {
    ...env,
    CKJS_LINKING: 'dynamic',
    npm_config_build_from_source: 'true',
    ...(nodedir ? { npm_config_nodedir: nodedir } : {}),
  };
  const built = Date.now();
  const args = [cli, 'rebuild', CONFLUENT, '--ignore-scripts=false', '--foreground-scripts'];
  try {
    await run(node, args, { cwd: dir, env: buildEnv, appendTo: log, timeoutMs: 20 * 60_000 });
  } catch (error) {
    failed[CONFLUENT] =
      `its native build failed (${String(error.message).split('\n')[0]}; log: ${log})`;
  }
  seconds.confluent = (Date.now() - built) / 1000;
  return { seconds, failed };
}

/**
 * Installs the clients unless this manifest and Node already have them (a failed build is
 * remembered too: delete the folder to try again). Built in a folder of its own, then renamed.
 * @returns {Promise<{ installed: { seconds: Record<string, number>, failed: Record<string, string> }, fresh: boolean, error?: string }>}
 */
async function ensureInstalled() {
  const stamp = stampOf();
  const existing = readJson(path.join(CLIENTS_DIR, STAMP));
  if (existing?.stamp === stamp) return { installed: existing, fresh: false };
  const tmp = `${CLIENTS_DIR}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  for (const file of MANIFEST_FILES) {
    fs.copyFileSync(path.join(MANIFEST_DIR, file), path.join(tmp, file));
  }
  fs.writeFileSync(LOG, '');
  console.log(
    `kafka clients: installing ${KAFKAJS}, ${CONFLUENT} and ${PLATFORMATIC} into ${path.relative(process.cwd(), CLIENTS_DIR)} (the native build takes minutes; log: ${path.relative(process.cwd(), LOG)})`,
  );
  try {
    const installed = { stamp, ...(await install(tmp, LOG)) };
    fs.writeFileSync(path.join(tmp, STAMP), `${JSON.stringify(installed, null, 2)}\n`);
    fs.rmSync(CLIENTS_DIR, { recursive: true, force: true });
    fs.renameSync(tmp, CLIENTS_DIR);
    return { installed, fresh: true };
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    return {
      installed: { seconds: {}, failed: {} },
      fresh: true,
      error: `npm could not install them: ${String(error.message).split('\n')[0]} (log: ${LOG})`,
    };
  }
}

/**
 * Loads one client from the private folder: CommonJS through require, ES modules by file URL.
 * @param {string} name
 * @param {{ esm: boolean }} kind
 */
async function load(name, { esm }) {
  const require = createRequire(path.join(CLIENTS_DIR, 'package.json'));
  // Read from its folder: a package's `exports` may not list its package.json.
  const pkg = readJson(path.join(CLIENTS_DIR, 'node_modules', name, 'package.json'));
  if (!pkg) throw new Error(`${name} is missing from ${CLIENTS_DIR}`);
  if (!satisfiesEngines(pkg.engines?.node, process.versions.node)) {
    throw new Error(`it needs Node ${pkg.engines.node}; this is ${process.version}`);
  }
  const module = esm ? await import(pathToFileURL(require.resolve(name)).href) : require(name);
  return { version: String(pkg.version), module };
}

/**
 * The candidates' clients, installed when needed; each loaded or with the reason it is not.
 * @returns {Promise<Record<'kafkajs' | 'confluent' | 'platformatic', LoadedClient>>}
 */
export async function kafkaClients() {
  const { installed, fresh, error } = await ensureInstalled().catch((e) => ({
    installed: { seconds: /** @type {Record<string, number>} */ ({}), failed: {} },
    fresh: false,
    error: `they could not be installed: ${String(e.message).split('\n')[0]}`,
  }));
  const manifest = readJson(path.join(MANIFEST_DIR, 'package.json'));
  /**
   * @param {string} name
   * @param {boolean} esm
   * @param {number} seconds
   * @returns {Promise<LoadedClient>}
   */
  const client = async (name, esm, seconds) => {
    const version = manifest?.dependencies?.[name] ?? '(no manifest)';
    const base = { name, version, installSeconds: fresh ? seconds : null };
    const reason =
      error ??
      (installed.failed[name] &&
        `${installed.failed[name]}${fresh ? '' : `; remembered from an earlier run, delete ${CLIENTS_DIR} to try again`}`);
    if (reason) return { ...base, module: null, reason };
    try {
      return { ...base, ...(await load(name, { esm })) };
    } catch (e) {
      return { ...base, module: null, reason: `it does not load: ${e.message.split('\n')[0]}` };
    }
  };
  const { npm = NaN, confluent = NaN } = installed.seconds;
  const clients = {
    kafkajs: await client(KAFKAJS, false, npm),
    confluent: await client(CONFLUENT, false, npm + confluent),
    platformatic: await client(PLATFORMATIC, true, npm),
  };
  for (const c of Object.values(clients)) {
    if (c.module && fresh) {
      console.log(
        `kafka clients: ${c.name} ${c.version} installed in ${c.installSeconds.toFixed(0)} s`,
      );
    }
    if (!c.module)
      console.log(`kafka clients: ${c.name} ${c.version} is not installed: ${c.reason}`);
  }
  return clients;
}
