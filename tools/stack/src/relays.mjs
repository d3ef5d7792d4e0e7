// Events relays beyond HERALD_EVENTS_RELAYS, run by a tool for its own duration (the benchmark's
// two-relay measurements, the fault suite): started and found by their pid files, so that
// `npm stop`, `npm run stack -- status` and `logs` handle them like the stack's own. Node
// built-ins only.
import {
  MAX_EVENTS_RELAYS,
  RELAY,
  eventsRelays,
  findService,
  logDir,
  relayName,
  relayReplica,
  runDir,
} from './config.mjs';
import { ensureDir, exists } from './files.mjs';
import { withLock } from './lock.mjs';
import { StackError, isQuiet, setQuiet } from './output.mjs';
import { ensureService } from './service-runner.mjs';

/** The relays that are not the stack's own (numbers above HERALD_EVENTS_RELAYS). */
function beyondConfigured() {
  const out = [];
  for (let n = Math.max(2, eventsRelays + 1); n <= MAX_EVENTS_RELAYS; n += 1) {
    out.push(relayReplica(n));
  }
  return out;
}

/**
 * The relays beyond HERALD_EVENTS_RELAYS whose pid file is there (started by `ensureRelays` and
 * not stopped since): `down` stops them too, `status` shows them.
 */
export function extraRelays() {
  return beyondConfigured().filter((s) => exists(s.pidFile));
}

/** The same relays while their logs are there, for `logs`. */
export function extraRelayLogs() {
  return beyondConfigured().filter((s) => exists(s.logFile));
}

/**
 * Runs at least `count` events relays (1 to MAX_EVENTS_RELAYS): starts `events-relay-2` …
 * `events-relay-<count>` where they do not run, beside the stack's own, for a tool that measures
 * or breaks several relays. They take their share of the outbox's shards at their first
 * heartbeat, and the others let go at their next. Resolves the names it started, which
 * `down({ only: names })` stops again. The stack must be up.
 * @param {number} count
 * @param {{ node?: string, quiet?: boolean }} [opts] `node`: the binary they run on (default
 *   this one: pass the services' own to measure what they run)
 * @returns {Promise<string[]>}
 */
export async function ensureRelays(count, opts = {}) {
  const { node = process.execPath, quiet = isQuiet() } = opts;
  if (!Number.isInteger(count) || count < 1 || count > MAX_EVENTS_RELAYS) {
    throw new StackError(RELAY, `cannot run ${count} relays (1..${MAX_EVENTS_RELAYS})`);
  }
  const previousQuiet = isQuiet();
  setQuiet(quiet);
  try {
    return await withLock(async () => {
      ensureDir(runDir);
      ensureDir(logDir);
      /** @type {string[]} */
      const started = [];
      for (let n = 2; n <= count; n += 1) {
        const result = await ensureService(findService(relayName(n)), { node });
        if (result === 'started') started.push(relayName(n));
      }
      return started;
    });
  } finally {
    setQuiet(previousQuiet);
  }
}
