// CPU time and memory of the stack's processes, from /proc (Linux). A component is a process
// tree: its main pid and every live descendant (PostgreSQL's backends, nginx's workers), plus
// the CPU of descendants that already exited and were reaped (cutime/cstime), so a backend that
// ends during a measurement still counts. The kernel counts all threads of a process together.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { status } from '@herald/stack/index.mjs';

/**
 * @param {string} name
 * @param {number} fallback
 */
function getconf(name, fallback) {
  try {
    return Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim()) || fallback;
  } catch {
    return fallback;
  }
}
const ticksPerSecond = getconf('CLK_TCK', 100);

/** The components measured, with the status() row each comes from. */
export const COMPONENTS = [
  'postgres',
  'redis',
  'kafka',
  'nginx',
  'auth',
  'contacts',
  'events',
  'billing',
  'events-relay',
];

/** The relays beside the stack's own (`events-relay-2`, …), measured when they run. */
export const isExtraRelay = (/** @type {string} */ name) => /^events-relay-\d+$/.test(name);

/**
 * {component: pid} of the running stack (see tools/stack/src/index.mjs `status()`), with the
 * relays beside the first that run now.
 * @returns {Promise<Record<string, number>>}
 */
export async function stackPids() {
  const rows = await status();
  /** @type {Record<string, number>} */
  const pids = {};
  for (const name of COMPONENTS) {
    const row = rows.find((r) => r.component === name);
    if (row?.pid) pids[name] = row.pid;
  }
  for (const row of rows) if (isExtraRelay(row.component) && row.pid) pids[row.component] = row.pid;
  return pids;
}

/** The node binary the stack's services run (the events service's), or null. */
export async function servicesNode() {
  const pid = (await stackPids()).events;
  if (!pid) return null;
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return null;
  }
}

/**
 * Fields of /proc/<pid>/stat after the command name (which may hold spaces), or null.
 * @param {number | string} pid a number, or 'self'
 */
function statFields(pid) {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Field 3 (state) is index 0 here; ppid 1, utime 11, stime 12, cutime 13, cstime 14.
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/**
 * ppid -> [pid] of every process now.
 * @typedef {Map<number, number[]>} Children
 */
/** @returns {Children} */
function childrenMap() {
  const children = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(entry);
    if (!f) continue;
    const ppid = Number(f[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(entry));
  }
  return children;
}

/**
 * `pid` and every live descendant.
 * @param {number} pid
 * @param {Children} children
 */
function tree(pid, children) {
  const all = [pid];
  for (let i = 0; i < all.length; i += 1) all.push(...(children.get(all[i]) ?? []));
  return all;
}

/**
 * CPU milliseconds of one process tree so far (see the top of this file), or null.
 * @param {number} pid
 * @param {Children} children
 */
function treeCpuMs(pid, children) {
  const root = statFields(pid);
  if (!root) return null;
  let ticks = Number(root[13]) + Number(root[14]); // reaped descendants
  for (const p of tree(pid, children)) {
    const f = p === pid ? root : statFields(p);
    if (f) ticks += Number(f[11]) + Number(f[12]);
  }
  return (ticks * 1000) / ticksPerSecond;
}

/** Busy CPU milliseconds of the whole machine (every core), from /proc/stat. */
function machineBusyMs() {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .split(/\s+/)
    .slice(1)
    .map(Number);
  void idle;
  void iowait;
  return ((user + nice + system + irq + softirq + steal) * 1000) / ticksPerSecond;
}

/**
 * CPU milliseconds so far, by component, and the pids they were read from.
 * @typedef {{ pids: Record<string, number>, ms: Record<string, number | null> }} CpuReading
 */
/**
 * A reading of every component's CPU so far, this process's own (the benchmark: its samplers,
 * the Kafka consumer, or the pg load of the floor) and its reaped children's (wrk, which is
 * spawned, runs and is reaped inside one measurement), and the machine's.
 * @param {Record<string, number>} pids
 * @returns {CpuReading}
 */
export function cpuReading(pids) {
  const children = childrenMap();
  /** @type {CpuReading} */
  const reading = { pids: { ...pids }, ms: {} };
  for (const [name, pid] of Object.entries(pids)) reading.ms[name] = treeCpuMs(pid, children);
  const self = statFields('self');
  reading.ms.bench = ((Number(self[11]) + Number(self[12])) * 1000) / ticksPerSecond;
  reading.ms.wrk = ((Number(self[13]) + Number(self[14])) * 1000) / ticksPerSecond;
  reading.ms.machine = machineBusyMs();
  return reading;
}

/**
 * CPU ms per request of each component between two readings. A component restarted in between
 * (another pid) gets null. `other` is the machine's busy time that none of them used: other
 * work on the machine, which makes the figures noisy when it is large.
 * @param {CpuReading} before
 * @param {CpuReading} after
 * @param {number} requests
 */
export function cpuPerRequest(before, after, requests) {
  /** @type {Record<string, number | null>} */
  const out = {};
  if (!(requests > 0)) return out; // nothing to divide by: every cell shows as unknown
  let sum = 0;
  for (const name of Object.keys(after.ms)) {
    if (name === 'machine') continue;
    const a = after.ms[name];
    const b = before.ms[name];
    const samePid = before.pids[name] === after.pids[name];
    if (a === null || b === null || b === undefined || !samePid) {
      out[name] = null;
      continue;
    }
    out[name] = (a - b) / requests;
    sum += a - b;
  }
  const machine = after.ms.machine - before.ms.machine;
  out.total = sum / requests;
  out.other = Math.max(0, machine - sum) / requests;
  out.machine = machine / requests;
  return out;
}

/**
 * Proportional set size, kB, of one process (its share of shared pages), or null.
 * @param {number} pid
 */
function pssKb(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return Number(/^Pss:\s+(\d+) kB/m.exec(text)?.[1] ?? NaN);
  } catch {
    return null;
  }
}

/**
 * Resident set size, kB, of one process, or null.
 * @param {number} pid
 */
function rssKb(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(text)?.[1] ?? NaN);
  } catch {
    return null;
  }
}

/**
 * Memory of each component in MiB: a single process's RSS; for a tree (PostgreSQL, nginx) the
 * sum of its processes' PSS, since summing RSS would count the shared buffers once per backend.
 * @param {Record<string, number>} pids
 */
export function memoryReading(pids) {
  const children = childrenMap();
  /** @type {Record<string, number | null>} */
  const out = {};
  for (const [name, pid] of Object.entries(pids)) {
    const procs = tree(pid, children);
    const kb =
      procs.length === 1 ? rssKb(pid) : procs.reduce((n, p) => n + (pssKb(p) ?? rssKb(p) ?? 0), 0);
    out[name] = kb === null ? null : kb / 1024;
  }
  return out;
}

/** Start, max and end of each component's memory over a run, fed by `sample`. */
export function memoryTracker() {
  /** @type {Record<string, { start: number, max: number, end: number }>} */
  const seen = {};
  return {
    /** @param {Record<string, number>} pids */
    sample(pids) {
      for (const [name, mib] of Object.entries(memoryReading(pids))) {
        if (mib === null || !Number.isFinite(mib)) continue;
        const s = (seen[name] ??= { start: mib, max: mib, end: mib });
        s.max = Math.max(s.max, mib);
        s.end = mib;
      }
    },
    result: () => seen,
  };
}
