// The SDK tracker measurement's driver: starts sdk-tracker-process.mjs (@herald/client's batching
// tracker in a Node process of its own, so procstat.mjs reads its CPU from /proc as the `sdk`
// column) and speaks its line protocol: SDK_READY after the warm-up, "go", SDK_RESULT.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const program = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sdk-tracker-process.mjs');

/**
 * One phase's figures as the load process reports them (its `summary()`); the measurement's
 * also `ownCpuMs`, the process's own CPU.
 * @typedef {object} SdkFigures
 * @property {number} seconds
 * @property {number} tracked
 * @property {number} failedEvents
 * @property {number} accepted
 * @property {number} requests
 * @property {number} ok
 * @property {number} networkErrors
 * @property {Record<string, number>} statuses
 * @property {string[]} errors
 * @property {number} p50
 * @property {number} p99
 * @property {number} mean
 * @property {number} [ownCpuMs]
 */
/**
 * Starts the load process with the config file sdk-tracker-process.mjs reads. Resolves once it
 * is warm, with its pid, the warm-up's figures, `measure()` (resolves to the measurement's
 * figures; the process keeps running so its CPU can still be read) and `stop()`.
 * @param {string} configFile
 */
export async function startSdkTracker(configFile) {
  const child = spawn(process.execPath, [program, configFile], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  let buffered = '';
  /**
   * What each awaited line resolves to: the process's JSON figures.
   * @type {Map<string, { resolve: (figures: SdkFigures) => void,
   *   reject: (error: Error) => void }>}
   */
  const waiting = new Map();
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => {
    buffered += d;
    let newline;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const m = /^(SDK_READY|SDK_RESULT) (.*)$/.exec(line);
      if (m) waiting.get(m[1])?.resolve(JSON.parse(m[2]));
    }
  });
  const exited = new Promise((resolve) => child.on('close', resolve));
  void exited.then((code) => {
    const error = new Error(`the SDK tracker process exited ${code} early: ${stderr.trim()}`);
    for (const { reject } of waiting.values()) reject(error);
  });
  /**
   * @param {string} tag
   * @returns {Promise<SdkFigures>}
   */
  const next = (tag) => new Promise((resolve, reject) => waiting.set(tag, { resolve, reject }));

  const readyPromise = next('SDK_READY');
  const resultPromise = next('SDK_RESULT');
  // A failed start or warm-up must not leave an unhandled rejection behind.
  resultPromise.catch(() => {});
  let warm;
  try {
    warm = await readyPromise;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    pid: child.pid,
    warm,
    async measure() {
      child.stdin.write('go\n');
      return resultPromise;
    },
    async stop() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
