// The suite runs with two events relays, as the chart does: a second one beside the stack's
// (when HERALD_EVENTS_RELAYS leaves it one) for the whole run, stopped when the stack is
// restored. The relay fault kills the one caught mid-publish: its PostgreSQL session is idle in
// a transaction, and the session's client port names the process through /proc.
import fs from 'node:fs';
import {
  down,
  ensureRelays,
  eventsRelays,
  findService,
  ports,
  relayName,
} from '@herald/stack/index.mjs';
import { livePid } from '@herald/stack/processes.mjs';

/** The relays the suite runs with, at least. */
export const RELAYS = 2;

/** The relays this process started beyond the stack's own, to stop when it is done. */
const started = new Set();

/** The names of the relays the suite runs with: `events-relay`, `events-relay-2`, … */
export function suiteRelayNames() {
  return Array.from({ length: Math.max(RELAYS, eventsRelays) }, (_, i) => relayName(i + 1));
}

/** Starts the relays the suite runs with where they do not run (the stack must be up). */
export async function ensureSuiteRelays() {
  for (const name of await ensureRelays(RELAYS, { quiet: true })) started.add(name);
}

/** Stops the relays this process started: the stack is left with the relays it had. */
export async function stopSuiteRelays() {
  if (started.size === 0) return;
  await down({ only: [...started], quiet: true });
  started.clear();
}

/**
 * The socket inodes of the TCP connections in `text` (/proc/net/tcp or tcp6) from local port
 * `localPort` to remote port `remotePort`.
 * @param {string} text
 * @param {number} localPort
 * @param {number} remotePort
 * @returns {Set<string>}
 */
export function connectionInodes(text, localPort, remotePort) {
  const inodes = new Set();
  const port = (/** @type {string} */ address) => parseInt(address.split(':').pop() ?? '', 16);
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    if (port(f[1]) === localPort && port(f[2]) === remotePort && f[9] !== '0') inodes.add(f[9]);
  }
  return inodes;
}

/**
 * The pid, among `pids`, of the process holding the TCP connection from local port
 * `clientPort` to PostgreSQL (Linux /proc), or null.
 * @param {number[]} pids
 * @param {number} clientPort
 */
function connectionOwner(pids, clientPort) {
  const inodes = new Set();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue; // no IPv6
    }
    for (const inode of connectionInodes(text, clientPort, ports.postgres)) inodes.add(inode);
  }
  if (inodes.size === 0) return null;
  for (const pid of pids) {
    let fds = [];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone
    }
    for (const fd of fds) {
      let link = '';
      try {
        link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode && inodes.has(inode)) return pid;
    }
  }
  return null;
}

/**
 * The relay whose PostgreSQL session is idle in a transaction now (mid-publish: its shards
 * locked, their rows read, the Kafka send under way, the rows not yet deleted), or null.
 * @param {import('pg').Pool} db a pool on herald_events
 * @returns {Promise<{ name: string, pid: number } | null>}
 */
export async function relayInTransaction(db) {
  const { rows } = await db.query(
    `select client_port from pg_stat_activity
     where application_name = 'herald-events-relay' and state = 'idle in transaction'
       and client_port is not null`,
  );
  if (rows.length === 0) return null;
  const relays = suiteRelayNames()
    .map((name) => {
      const s = findService(name);
      return { name, pid: livePid(s.pidFile, s.entryPath) };
    })
    .filter((r) => r.pid !== null);
  for (const { client_port: port } of rows) {
    const pid = connectionOwner(
      relays.map((r) => r.pid),
      Number(port),
    );
    const relay = relays.find((r) => r.pid === pid);
    if (relay) return relay;
  }
  return null;
}
