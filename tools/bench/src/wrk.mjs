// The load generator of the events benchmark: Debian's wrk (C, one event-loop thread), driven by
// requests.lua. A Node fetch loop spends 0.5 to 1 ms of CPU per request itself, which on a small
// machine takes that CPU from the services it measures; wrk spends a few microseconds.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { which } from '@herald/stack/processes.mjs';
import { ensureSystemPackages } from '@herald/stack/system-packages.mjs';

export const luaScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'requests.lua');

/** Any TrueType/OpenType font: the chart's text needs one (resvg reads the system's fonts). */
function findFont() {
  for (const dir of ['/usr/share/fonts', '/usr/local/share/fonts']) {
    try {
      const found = fs
        .readdirSync(dir, { recursive: true })
        .find((f) => /\.(ttf|otf)$/i.test(String(f)));
      if (found) return path.join(dir, String(found));
    } catch {
      // no such folder
    }
  }
  return null;
}

const REQUIREMENTS = {
  wrk: { find: () => which('wrk'), apt: 'wrk' },
  font: { find: findFont, apt: 'fonts-dejavu-core' },
};

/** wrk's path, installed with apt-get the way the stack installs nginx when it is missing. */
export async function ensureWrk() {
  const found = await ensureSystemPackages({ requirements: REQUIREMENTS });
  return found.wrk;
}

/**
 * A JS value as a Lua expression (strings, numbers, booleans, arrays, plain objects).
 * @param {unknown} value
 * @returns {string}
 */
export function toLua(value) {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return JSON.stringify(value); // same escapes as Lua's "…"
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `{${value.map(toLua).join(',')}}`;
  return `{${Object.entries(value)
    .map(([k, v]) => `[${JSON.stringify(k)}]=${toLua(v)}`)
    .join(',')}}`;
}

/**
 * Writes the Lua config one measurement's wrk reads (`return {...}`); returns its path.
 * @param {string} file
 * @param {Record<string, unknown>} config
 */
export function writeConfig(file, config) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `return ${toLua(config)}\n`);
  return file;
}

/**
 * Milliseconds from wrk's latency text ("812.00us", "3.21ms", "1.02s", "2.00m").
 * @param {string} text
 */
export function wrkDuration(text) {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) return NaN;
  const scale = { us: 0.001, ms: 1, s: 1000, m: 60000 }[m[2]];
  return Number(m[1]) * scale;
}

/**
 * What requests.lua prints on its WRK_RESULT line (latencies in µs).
 * @typedef {object} WrkResult
 * @property {number} requests
 * @property {number} durationUs
 * @property {number} bytes
 * @property {number} acceptedEvents
 * @property {Record<string, number>} statuses
 * @property {{ connect: number, read: number, write: number, timeout: number }} socketErrors
 * @property {{ p50: number, p90: number, p99: number, max: number, mean: number }} latencyUs
 */
/**
 * wrk's stdout: the `--latency` distribution and requests.lua's WRK_RESULT line.
 * @param {string} stdout
 */
export function parseWrkOutput(stdout) {
  const line = stdout.split('\n').find((l) => l.startsWith('WRK_RESULT '));
  if (!line) throw new Error(`wrk printed no WRK_RESULT line:\n${stdout}`);
  /** @type {WrkResult} */
  const raw = JSON.parse(line.slice('WRK_RESULT '.length));
  /** @type {Record<string, number>} */
  const distribution = {};
  for (const m of stdout.matchAll(/^\s+(\d+)%\s+(\S+)\s*$/gm)) {
    distribution[m[1]] = wrkDuration(m[2]);
  }
  const statuses = Object.fromEntries(
    Object.entries(raw.statuses).sort(([a], [b]) => Number(a) - Number(b)),
  );
  const ok = Object.entries(statuses)
    .filter(([s]) => Number(s) >= 200 && Number(s) < 300)
    .reduce((n, [, c]) => n + c, 0);
  const socket = raw.socketErrors;
  const socketErrors = socket.connect + socket.read + socket.write + socket.timeout;
  const seconds = raw.durationUs / 1e6;
  // No answer, no latency: wrk would print zeros.
  const ms = (us) => (raw.requests > 0 ? us / 1000 : NaN);
  return {
    seconds,
    requests: raw.requests,
    ok,
    // Answers that are not 2xx, and requests that got no answer at all.
    failed: raw.requests - ok + socketErrors,
    statuses,
    socketErrors: socket,
    acceptedEvents: raw.acceptedEvents,
    requestsPerSecond: ok / seconds,
    p50: ms(raw.latencyUs.p50),
    p90: ms(raw.latencyUs.p90),
    p99: ms(raw.latencyUs.p99),
    max: ms(raw.latencyUs.max),
    mean: ms(raw.latencyUs.mean),
    // wrk's own --latency table, kept to cross-check the figures above.
    latencyDistributionMs: distribution,
  };
}

/**
 * Runs wrk for `seconds` with `connections` on one thread (one thread drives thousands of
 * requests a second and leaves the second core to the system under test).
 * `onStart(pid)` is called once it runs. Resolves to parseWrkOutput's figures plus the text.
 * @param {{ wrk: string, url: string, connections: number, seconds: number, config: string,
 *   tag: string, threads?: number, onStart?: (pid: number | undefined) => void }} options
 * @returns {Promise<ReturnType<typeof parseWrkOutput> & { text: string }>}
 */
export function runWrk({ wrk, url, connections, seconds, config, tag, threads = 1, onStart }) {
  const args = [
    `--threads=${Math.min(threads, connections)}`,
    `--connections=${connections}`,
    `--duration=${seconds}s`,
    '--timeout=10s',
    '--latency',
    `--script=${luaScript}`,
    url,
    '--',
    config,
    tag,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(wrk, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    onStart?.(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`wrk exited ${code}: ${stderr}${stdout}`));
        return;
      }
      try {
        resolve({ ...parseWrkOutput(stdout), text: stdout.split('WRK_RESULT')[0].trimEnd() });
      } catch (error) {
        reject(error);
      }
    });
  });
}
