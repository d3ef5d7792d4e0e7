// What the fault suite's driver keeps of the answers it gets: the ledger the oracle checks, the
// counts by status per window of the phase, the unexpected answers, and the Contacts and bodies
// that later requests build on.

/**
 * @typedef {import('./requests.mjs').Load} Load
 * @typedef {import('./requests.mjs').Op} Op
 *
 * @typedef {object} Ledger
 * @property {Map<string, number>} acked    dedupKey -> when it was answered 202 (ms since the
 *   epoch)
 * @property {Map<string, number>} rejected dedupKey -> status: in a request answered 4xx whose
 *   every attempt was answered
 * @property {Set<string>} abandoned  given up on after the retry window (stored or not: either
 *   is correct)
 * @property {Set<string>} uncertain  of a request answered 4xx after an attempt that may have
 *   been recorded
 *
 * @typedef {object} Window The counts of one window of the phase.
 * @property {number} requests
 * @property {Record<string, number>} answers
 * @property {Record<string, number>} errors
 * @property {number} servedWithoutBudget
 * @property {number} servedWithBudget
 *
 * @typedef {object} Totals
 * @property {number} requests
 * @property {Record<string, number>} answers
 * @property {Record<string, number>} errors
 * @property {Record<string, number>} operations
 * @property {number} eventsSent
 * @property {number} probes
 * @property {number} refusedAsMeant  requests made to be refused (400, 422) that were
 * @property {Record<string, Record<string, number>>} errorsByKind  kind of request -> label ->
 *   count, for the errors: what was refused or failed
 *
 * @typedef {object} Answer
 * @property {number} status
 * @property {Headers} headers
 * @property {any} body  parsed JSON, or the text
 */

/** @returns {Ledger} */
export function createLedger() {
  return {
    acked: new Map(),
    rejected: new Map(),
    abandoned: new Set(),
    uncertain: new Set(),
  };
}

/**
 * @param {Totals} totals
 * @param {string} kind
 * @param {string | number} label
 */
function countKind(totals, kind, label) {
  const k = (totals.errorsByKind[kind] ??= {});
  k[label] = (k[label] ?? 0) + 1;
}

/** Counts, per window of the phase ('lead-in', 'fault', 'recovery', 'after', 'drain'). */
export function createCounts() {
  let window = 'start';
  /** @type {Map<string, Window>} */
  const windows = new Map();
  const win = () => {
    let w = windows.get(window);
    if (!w) {
      w = { requests: 0, answers: {}, errors: {}, servedWithoutBudget: 0, servedWithBudget: 0 };
      windows.set(window, w);
    }
    return w;
  };
  /** @type {Totals} */
  const totals = {
    requests: 0,
    answers: {},
    errors: {},
    operations: {},
    eventsSent: 0,
    probes: 0,
    refusedAsMeant: 0,
    errorsByKind: {},
  };

  /**
   * @param {number} status
   * @param {Headers} headers
   * @param {string} kind
   */
  function countAnswer(status, headers, kind) {
    const w = win();
    w.requests += 1;
    totals.requests += 1;
    w.answers[status] = (w.answers[status] ?? 0) + 1;
    totals.answers[status] = (totals.answers[status] ?? 0) + 1;
    if (kind === 'bad' && (status === 400 || status === 422)) {
      totals.refusedAsMeant += 1; // the answer such a request must get: no client error
    } else if (status >= 400) {
      countKind(totals, kind, status);
      w.errors[status] = (w.errors[status] ?? 0) + 1;
      totals.errors[status] = (totals.errors[status] ?? 0) + 1;
    } else if (headers.get('ratelimit-limit') === null) {
      w.servedWithoutBudget += 1; // the guard failed open: served without a budget
    } else {
      w.servedWithBudget += 1;
    }
  }

  /**
   * @param {string} label
   * @param {string} kind
   */
  function countError(label, kind) {
    countKind(totals, kind, label);
    const w = win();
    w.requests += 1;
    totals.requests += 1;
    w.errors[label] = (w.errors[label] ?? 0) + 1;
    totals.errors[label] = (totals.errors[label] ?? 0) + 1;
  }

  return {
    windows,
    totals,
    countAnswer,
    countError,
    /** @param {string} name the window the next answers are counted in */
    mark(name) {
      window = name;
    },
  };
}

/**
 * The ledger entries and the knowledge a final answer brings: `succeeded` for a 2xx, `failed`
 * for a 4xx; `anomalies` the first 50 answers the load did not expect.
 * @param {Load} load
 * @param {Ledger} ledger
 */
export function createAnswers(load, ledger) {
  /** @type {string[]} */
  const anomalies = [];
  /** @param {string} text */
  const anomaly = (text) => {
    if (anomalies.length < 50) anomalies.push(text);
  };

  /**
   * @param {Op} op
   * @param {Answer} res
   */
  function succeeded(op, res) {
    const now = Date.now();
    if (op.kind.startsWith('upsert')) {
      const c = res.body;
      if (c?.id && !load.contacts.some((x) => x.id === c.id)) {
        const contact = { id: c.id, externalId: c.externalId ?? null, email: op.email };
        load.contacts.push(contact);
        if (contact.externalId) load.withExternalId.push(contact);
      }
      return;
    }
    if (res.status !== 202) anomaly(`${op.kind} on ${op.route} answered ${res.status}`);
    if (res.body?.accepted !== op.events) {
      anomaly(
        `${op.kind} on ${op.route}: accepted ${res.body?.accepted} of ${op.events} Events sent`,
      );
    }
    if (op.designedBad) {
      anomaly(`a request that must be refused was answered ${res.status} on ${op.route}`);
    }
    for (const key of op.keys) {
      if (!ledger.acked.has(key)) ledger.acked.set(key, now);
      ledger.abandoned.delete(key);
    }
    if (op.kind !== 'replay' && op.events <= 200) {
      load.recent.push({
        route: op.route,
        path: op.path,
        bodyText: op.bodyText,
        keys: op.keys,
        events: op.events,
        firstSentAt: op.firstSentAt,
      });
      if (load.recent.length > 20) load.recent.shift();
    }
  }

  /**
   * @param {Op} op
   * @param {Answer} res
   * @param {boolean} ambiguous an earlier attempt may have been recorded
   */
  function failed(op, res, ambiguous) {
    if (!op.designedBad) {
      anomaly(`${op.kind} on ${op.route ?? op.path} answered ${res.status}`);
    }
    for (const key of op.keys) {
      if (ledger.acked.has(key)) continue;
      // A refused request records nothing, unless an earlier attempt of it was recorded.
      if (ambiguous && !op.designedBad) ledger.uncertain.add(key);
      else ledger.rejected.set(key, res.status);
    }
  }

  return { anomalies, succeeded, failed };
}
