// The events relays during the events benchmark: a measurement that asks for two relays gets a
// second one started for it (the stack's `ensureRelays`) and stopped after, so one run prints
// the publish lag with one relay and with two; around each measurement that records Events, each
// relay's count of published messages (`outbox_published_total` on its metrics port) says what
// share of the publishing it did.
import { down, ensureRelays, findService, status } from '@herald/stack/index.mjs';
import { httpRequest } from '@herald/stack/net.mjs';

/** A relay process of the stack by its status row: `events-relay`, `events-relay-2`, … */
export const isRelay = (/** @type {string} */ component) => /^events-relay(-\d+)?$/.test(component);

/**
 * The messages a relay has published from the events outbox, from its metrics page: the sum of
 * its `outbox_published_total` series of that outbox (one per topic). 0 before its first
 * publish, when the counter has no series yet.
 * @param {string} text the Prometheus text exposition
 */
export function publishedTotal(text) {
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^outbox_published_total\{([^}]*)\} ([0-9.e+]+)/.exec(line);
    if (match && /(^|,)outbox_name="events"(,|$)/.test(match[1])) sum += Number(match[2]);
  }
  return sum;
}

/**
 * Each relay's share of what was published between two readings (relay → published total);
 * a relay missing from either reading (started or restarted in between) counts from 0.
 * @param {Record<string, number>} before
 * @param {Record<string, number>} after
 * @returns {{ name: string, published: number, share: number }[]}
 */
export function relayShares(before, after) {
  const rows = Object.entries(after).map(([name, total]) => {
    const start = before[name];
    return { name, published: start === undefined || start > total ? total : total - start };
  });
  const all = rows.reduce((n, r) => n + r.published, 0);
  return rows
    .sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }))
    .map((r) => ({ ...r, share: all > 0 ? r.published / all : NaN }));
}

/**
 * The published total of every relay that runs now (relay name → messages).
 * @returns {Promise<Record<string, number>>}
 */
export async function readPublished() {
  const relays = (await status()).filter((r) => isRelay(r.component) && r.pid);
  /** @type {Record<string, number>} */
  const out = {};
  await Promise.all(
    relays.map(async (r) => {
      try {
        const res = await httpRequest(findService(r.component).metricsUrl, { timeoutMs: 3000 });
        if (res.status === 200) out[r.component] = publishedTotal(res.body);
      } catch {
        // not answering: left out, as a relay that does not run
      }
    }),
  );
  return out;
}

/**
 * Keeps the number of relays each measurement asks for: `use(n)` starts relays up to `n` (with
 * `node`, the services' own binary) and resolves the names it started; for n = 1 it stops those
 * it started. The stack's own relays (HERALD_EVENTS_RELAYS) are never stopped.
 * @param {{ node?: string }} [options]
 */
export function relayCount({ node } = {}) {
  /** @type {string[]} */
  let started = [];
  return {
    /**
     * @param {number} n
     * @returns {Promise<string[]>}
     */
    async use(n) {
      if (n > 1) {
        const now = await ensureRelays(n, { node, quiet: true });
        started = [...started, ...now];
        return now;
      }
      if (started.length > 0) {
        await down({ only: started, quiet: true });
        started = [];
      }
      return [];
    },
    /** Stops what it started. */
    stop: () => (started.length > 0 ? down({ only: started, quiet: true }) : Promise.resolve()),
  };
}
