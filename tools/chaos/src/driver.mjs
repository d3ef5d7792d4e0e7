// The fault suite's load: a steady mix of Contact upserts, single Events and arrays of 50 to
// 1,000 Events on all four Event routes, every Event with its own dedupKey, sent by a few lanes
// at a bounded rate. It behaves as the API reference asks a client to: a timeout, a lost
// connection or a 5xx is resent with the same body and keys (429 and 503 after Retry-After), a
// 401 once after a new token exchange, and nothing is resent later than the dedup window allows.
// Its ledger is what the oracle checks: every Event answered 202, every Event of a request
// answered 4xx, every Event given up on. Its parts: what it sends (requests.mjs), how it sends
// one request (sender.mjs), at what pace (pacing.mjs), what it keeps of the answers
// (bookkeeping.mjs).
import { randomUUID } from 'node:crypto';
import { createAnswers, createCounts, createLedger } from './bookkeeping.mjs';
import { createPacer } from './pacing.mjs';
import { bigArrayOp, eventsOp, nextOp, upsertOp } from './requests.mjs';
import { createSender } from './sender.mjs';

export { ROUTES, arraySize } from './requests.mjs';
export { errorLabel } from './sender.mjs';

/**
 * @typedef {import('./requests.mjs').Tenant} Tenant
 * @typedef {import('./requests.mjs').Load} Load
 * @typedef {import('./requests.mjs').Op} Op
 */

/**
 * Makes `count` Contacts, `lanes` at a time (2/3 with an externalId); throws when one fails.
 * @param {Load} load
 * @param {(op: Op) => Promise<import('./sender.mjs').Outcome>} run
 * @param {number} count
 * @param {number} lanes
 */
async function seed(load, run, count, lanes) {
  const ops = Array.from({ length: count }, (_, i) =>
    upsertOp(load, i % 3 === 2 ? 'upsert-post' : 'upsert-put', true),
  );
  while (ops.length > 0) {
    const results = await Promise.all(ops.splice(0, lanes).map((op) => run(op)));
    if (results.some((r) => r.abandoned || Number(r.status) >= 300)) {
      throw new Error(`could not create the first Contacts: ${JSON.stringify(results)}`);
    }
  }
  if (load.withExternalId.length === 0) throw new Error('no Contact with an externalId');
}

/**
 * A fresh load of one Tenant: what it sent and was answered (ledger, counts, answers) and the
 * sender that resends as a client should. The driver and the restore drill start from it.
 * @param {{ tenant: Tenant, retryWindowMs: number, attemptTimeoutMs: number }} options
 */
export function createSession({ tenant, retryWindowMs, attemptTimeoutMs }) {
  /** @type {Load} */
  const load = {
    tenant,
    tag: randomUUID().slice(0, 8),
    seq: 0,
    contacts: [],
    withExternalId: [],
    recent: [],
  };
  const ledger = createLedger();
  const counts = createCounts();
  const answers = createAnswers(load, ledger);
  const sender = createSender({ tenant, ledger, counts, answers, retryWindowMs, attemptTimeoutMs });
  return { load, ledger, counts, answers, sender };
}

/**
 * @param {object} options
 * @param {Tenant} options.tenant
 * @param {number} [options.lanes]            requests in flight at most (default 4)
 * @param {number} [options.ratePerSecond]    new requests a second at most (default 8)
 * @param {number} [options.retryWindowMs]    no resend later than this after the first send
 *                                            (default 45 s, inside the 60 s dedup window)
 * @param {number} [options.attemptTimeoutMs] one attempt's deadline (default 10 s)
 * @param {number} [options.seedContacts]     Contacts made before the load starts (default 24)
 */
export function createDriver(options) {
  const {
    tenant,
    lanes = 4,
    ratePerSecond = 8,
    retryWindowMs = 45_000,
    attemptTimeoutMs = 10_000,
    seedContacts = 24,
  } = options;
  const { load, ledger, counts, answers, sender } = createSession({
    tenant,
    retryWindowMs,
    attemptTimeoutMs,
  });
  const { execute } = sender;

  /** @param {Op} op */
  async function run(op) {
    counts.totals.operations[op.kind] = (counts.totals.operations[op.kind] ?? 0) + 1;
    if (op.kind !== 'replay') counts.totals.eventsSent += op.events;
    return execute(op);
  }

  const pacer = createPacer({ lanes, ratePerSecond, next: () => run(nextOp(load)) });

  return {
    tag: load.tag,
    ledger,
    totals: counts.totals,
    windows: counts.windows,
    anomalies: answers.anomalies,
    contacts: load.contacts,

    /** Makes the first Contacts (2/3 with an externalId), before any Event is sent. */
    seed: () => seed(load, run, seedContacts, lanes),

    /** Starts the lanes. */
    start: pacer.start,

    /** Names the window the next answers are counted in. */
    mark: counts.mark,

    /**
     * Sends `count` arrays of 1,000 Events now, beside the lanes; resolves when they end.
     * @param {number} count
     * @param {string} [route]
     */
    sendBig(count, route) {
      return Promise.all(
        Array.from({ length: count }, () => pacer.keep(run(bigArrayOp(load, route)))),
      );
    },

    /** Requests in flight now: [{kind, events, ageMs}]. */
    inflight: sender.inflight,

    /** One single Event, one attempt (5 s): true when answered 202. Counted as a probe. */
    async probe() {
      const op = eventsOp(load, 'probe', 'by-contact-id', 1);
      const result = await execute(op, { once: true, timeoutMs: 5_000 });
      return result.status === 202;
    },

    /** Stops starting new requests and waits for those under way (and their resends). */
    stop: pacer.stop,
  };
}
