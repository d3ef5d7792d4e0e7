// The fault suite's load: a steady mix of Contact upserts, single Events and arrays of 50 to
// 1,000 Events on all four Event routes, every Event with its own dedupKey, sent by a few lanes
// at a bounded rate. It behaves as the API reference asks a client to: a timeout, a lost
// connection or a 5xx is resent with the same body and keys (429 and 503 after Retry-After), a
// 401 once after a new token exchange, and nothing is resent later than the dedup window allows.
// Its ledger is what the oracle checks: every Event answered 202, every Event of a request
// answered 4xx, every Event given up on.
import { randomUUID } from 'node:crypto';
import { exchange, request } from './api.mjs';

export const ROUTES = ['by-contact-id', 'by-external-id', 'by-email', 'by-organization'];

/** Sizes of the arrays: mostly small, some large, one in ten the maximum of 1,000. */
export function arraySize(random = Math.random) {
  const r = random();
  if (r < 0.6) return 50 + Math.floor(random() * 151);
  if (r < 0.9) return 200 + Math.floor(random() * 401);
  return 1000;
}

/** What a lane does next, by weight. */
const MIX = [
  ['upsert-put', 10],
  ['upsert-post', 5],
  ['single', 35],
  ['array', 37],
  ['replay', 6],
  ['bad', 7],
];
const MIX_TOTAL = MIX.reduce((n, [, w]) => n + w, 0);

const EVENT_NAMES = ['Order Completed', 'Page Viewed', 'Signed Up', 'Cart Updated'];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = (list) => list[Math.floor(Math.random() * list.length)];

/** A network failure's label for the error counts: timeout, reset, refused or network. */
export function errorLabel(err) {
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return 'timeout';
  const code = err?.cause?.code ?? err?.code;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'reset';
  if (code === 'ECONNREFUSED') return 'refused';
  return 'network';
}

/** Seconds of a Retry-After header as milliseconds, or null. */
function retryAfterMs(headers) {
  const value = headers?.get('retry-after');
  if (!value) return null;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
}

/**
 * @param {object} options
 * @param {{tenantId: string, clientId: string, secret: string, token: string,
 *   tokenExpiresAt: number, organization: string}} options.tenant
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
  const tag = randomUUID().slice(0, 8);
  let seq = 0;
  const nextKey = (prefix = 'k') => `${prefix}-${tag}-${(seq += 1)}`;

  /** Contacts known to exist (answered 2xx): {id, externalId (or null), email}. */
  const contacts = [];
  const withExternalId = [];

  const ledger = {
    /** dedupKey -> when it was answered 202 (ms since the epoch). */
    acked: new Map(),
    /** dedupKey -> status: in a request answered 4xx whose every attempt was answered. */
    rejected: new Map(),
    /** dedupKeys given up on after the retry window (stored or not: either is correct). */
    abandoned: new Set(),
    /** dedupKeys of a request answered 4xx after an attempt that may have been recorded. */
    uncertain: new Set(),
  };

  // Counts, per window of the phase ('lead-in', 'fault', 'recovery', 'after', 'drain').
  let window = 'start';
  const windows = new Map();
  const win = () => {
    let w = windows.get(window);
    if (!w) {
      w = { requests: 0, answers: {}, errors: {}, servedWithoutBudget: 0, servedWithBudget: 0 };
      windows.set(window, w);
    }
    return w;
  };
  const totals = {
    requests: 0,
    answers: {},
    errors: {},
    operations: {},
    eventsSent: 0,
    probes: 0,
    /** Requests made to be refused (400, 422) that were. */
    refusedAsMeant: 0,
    /** kind of request -> label -> count, for the errors: what was refused or failed. */
    errorsByKind: {},
  };
  const anomalies = [];
  const anomaly = (text) => {
    if (anomalies.length < 50) anomalies.push(text);
  };

  const inflight = new Set();
  const recent = []; // {route, bodyText, keys, firstSentAt}: 202'd bodies a replay may resend
  let stopping = false;
  let nextStartAt = Date.now();
  let refreshing;

  function countKind(kind, label) {
    const k = (totals.errorsByKind[kind] ??= {});
    k[label] = (k[label] ?? 0) + 1;
  }

  function countAnswer(status, headers, kind) {
    const w = win();
    w.requests += 1;
    totals.requests += 1;
    w.answers[status] = (w.answers[status] ?? 0) + 1;
    totals.answers[status] = (totals.answers[status] ?? 0) + 1;
    if (kind === 'bad' && (status === 400 || status === 422)) {
      totals.refusedAsMeant += 1; // the answer such a request must get: no client error
    } else if (status >= 400) {
      countKind(kind, status);
      w.errors[status] = (w.errors[status] ?? 0) + 1;
      totals.errors[status] = (totals.errors[status] ?? 0) + 1;
    } else if (headers.get('ratelimit-limit') === null) {
      w.servedWithoutBudget += 1; // the guard failed open: served without a budget
    } else {
      w.servedWithBudget += 1;
    }
  }

  function countError(label, kind) {
    countKind(kind, label);
    const w = win();
    w.requests += 1;
    totals.requests += 1;
    w.errors[label] = (w.errors[label] ?? 0) + 1;
    totals.errors[label] = (totals.errors[label] ?? 0) + 1;
  }

  /** A new token when the one held is within a minute of expiry; the old one kept on failure. */
  async function refreshToken(force = false) {
    if (!force && Date.now() < tenant.tokenExpiresAt - 60_000) return;
    refreshing ??= exchange(tenant.clientId, tenant.secret)
      .then((t) => {
        tenant.token = t.accessToken;
        tenant.tokenExpiresAt = t.expiresAt;
      })
      .catch(() => {})
      .finally(() => {
        refreshing = undefined;
      });
    await refreshing;
  }

  /**
   * Sends one operation until it is answered 2xx, answered 4xx, or the retry window is over.
   * op: {kind, method, path, bodyText, keys, events, route, designedBad, firstSentAt?}
   * Resolves {status} of the final answer, or {abandoned: true}.
   */
  async function execute(op, { once = false, timeoutMs = attemptTimeoutMs } = {}) {
    op.firstSentAt ??= Date.now();
    let ambiguous = false;
    let reauthenticated = false;
    for (let attempt = 1; ; attempt += 1) {
      await refreshToken();
      const track = { kind: op.kind, events: op.events, startedAt: Date.now() };
      inflight.add(track);
      let res;
      let err;
      try {
        res = await request(op.method, op.path, {
          token: tenant.token,
          body: op.bodyText,
          timeoutMs,
        });
      } catch (e) {
        err = e;
      } finally {
        inflight.delete(track);
      }
      if (op.kind === 'probe') totals.probes += 1;
      else if (res) countAnswer(res.status, res.headers, op.kind);
      else countError(errorLabel(err), op.kind);

      if (res && res.status >= 200 && res.status < 300) {
        succeeded(op, res);
        return { status: res.status };
      }
      if (res?.status === 401 && !reauthenticated) {
        reauthenticated = true;
        await refreshToken(true);
        continue;
      }
      const retryable = !res || res.status >= 500 || res.status === 429;
      if (!retryable) {
        failed(op, res, ambiguous);
        return { status: res.status };
      }
      // A 5xx or no answer may come after the request was recorded (a connection lost during
      // the commit); a 429 comes from the guard, before anything is done.
      if (!res || res.status >= 500) ambiguous = true;
      if (once) {
        for (const key of op.keys) if (!ledger.acked.has(key)) ledger.abandoned.add(key);
        return { status: res?.status ?? errorLabel(err) };
      }
      const backoff = Math.min(200 * 2 ** (attempt - 1), 2_000) * (0.5 + Math.random() / 2);
      const wait = Math.min(retryAfterMs(res?.headers) ?? backoff, 10_000);
      if (Date.now() + wait > op.firstSentAt + retryWindowMs) {
        for (const key of op.keys) if (!ledger.acked.has(key)) ledger.abandoned.add(key);
        return { abandoned: true };
      }
      await sleep(wait);
    }
  }

  function succeeded(op, res) {
    const now = Date.now();
    if (op.kind.startsWith('upsert')) {
      const c = res.body;
      if (c?.id && !contacts.some((x) => x.id === c.id)) {
        const contact = { id: c.id, externalId: c.externalId ?? null, email: op.email };
        contacts.push(contact);
        if (contact.externalId) withExternalId.push(contact);
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
      recent.push({
        route: op.route,
        path: op.path,
        bodyText: op.bodyText,
        keys: op.keys,
        events: op.events,
        firstSentAt: op.firstSentAt,
      });
      if (recent.length > 20) recent.shift();
    }
  }

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

  // -------------------------------------------------------------------------------------------
  // Operations

  function eventFor(route, contact, key, n) {
    const base = {
      eventName: pick(EVENT_NAMES),
      occurredAt: new Date().toISOString(),
      dedupKey: key,
      properties: { chaos: tag, n },
    };
    switch (route) {
      case 'by-contact-id':
        return { contactId: contact.id, ...base };
      case 'by-external-id':
        return { contactExternalId: contact.externalId, ...base };
      case 'by-email':
        return { contactEmail: contact.email, ...base };
      default:
        return {
          organizationExternalId: tenant.organization,
          ...(n % 2 === 0 ? { contactId: contact.id } : {}),
          ...base,
        };
    }
  }

  function eventsOp(kind, route, count) {
    const pool = route === 'by-external-id' ? withExternalId : contacts;
    const keys = [];
    const events = [];
    for (let i = 0; i < count; i += 1) {
      const key = nextKey();
      keys.push(key);
      events.push(eventFor(route, pick(pool), key, i));
    }
    return {
      kind,
      route,
      method: 'POST',
      path: `/v1/events/${route}`,
      bodyText: JSON.stringify(kind === 'single' ? events[0] : events),
      keys,
      events: count,
    };
  }

  /** A request that must be refused whole: one Event names no Contact (422) or is invalid (400). */
  function badOp() {
    const route = pick(['by-contact-id', 'by-email']);
    const count = 3 + Math.floor(Math.random() * 28);
    const keys = [];
    const events = [];
    for (let i = 0; i < count; i += 1) {
      const key = nextKey('bad');
      keys.push(key);
      events.push(eventFor(route, pick(contacts), key, i));
    }
    const spoilt = Math.floor(Math.random() * count);
    if (Math.random() < 0.5) {
      events[spoilt] =
        route === 'by-contact-id'
          ? { ...events[spoilt], contactId: randomUUID() }
          : { ...events[spoilt], contactEmail: `nobody-${randomUUID()}@chaos.example` };
    } else {
      events[spoilt] = { ...events[spoilt], occurredAt: 'yesterday' };
    }
    return {
      kind: 'bad',
      route,
      method: 'POST',
      path: `/v1/events/${route}`,
      bodyText: JSON.stringify(events),
      keys,
      events: count,
      designedBad: true,
    };
  }

  function upsertOp(kind, fresh = false) {
    const existing = !fresh && Math.random() < 0.6 && contacts.length > 0;
    if (kind === 'upsert-put') {
      const contact = existing && withExternalId.length > 0 ? pick(withExternalId) : null;
      const externalId = contact?.externalId ?? `c-${tag}-${(seq += 1)}`;
      const email = contact?.email ?? `${externalId}@chaos.example`;
      return {
        kind,
        method: 'PUT',
        path: `/v1/contacts/${encodeURIComponent(externalId)}`,
        bodyText: JSON.stringify({ email, name: `Chaos ${(seq += 1)}` }),
        email,
        keys: [],
        events: 0,
      };
    }
    const email = existing ? pick(contacts).email : `e-${tag}-${(seq += 1)}@chaos.example`;
    return {
      kind,
      method: 'POST',
      path: '/v1/contacts',
      bodyText: JSON.stringify({ email, name: `Chaos ${(seq += 1)}` }),
      email,
      keys: [],
      events: 0,
    };
  }

  function nextOp() {
    let roll = Math.random() * MIX_TOTAL;
    let kind = MIX[0][0];
    for (const [k, w] of MIX) {
      if (roll < w) {
        kind = k;
        break;
      }
      roll -= w;
    }
    if (kind === 'replay') {
      // Only what was first sent recently: the resend must land inside the dedup window.
      const fresh = recent.filter((sent) => Date.now() - sent.firstSentAt < 20_000);
      if (fresh.length > 0) return { kind: 'replay', method: 'POST', ...pick(fresh) };
      kind = 'single';
    }
    if (kind === 'upsert-put' || kind === 'upsert-post') return upsertOp(kind);
    if (kind === 'bad') return badOp();
    const route = pick(ROUTES);
    return eventsOp(kind, route, kind === 'single' ? 1 : arraySize());
  }

  async function run(op) {
    totals.operations[op.kind] = (totals.operations[op.kind] ?? 0) + 1;
    if (op.kind !== 'replay') totals.eventsSent += op.events;
    return execute(op);
  }

  async function lane() {
    while (!stopping) {
      const now = Date.now();
      const startAt = Math.max(now, nextStartAt);
      nextStartAt = startAt + 1000 / ratePerSecond;
      if (startAt > now) await sleep(startAt - now);
      if (stopping) break;
      await run(nextOp());
    }
  }

  const running = new Set();
  const keep = (promise) => {
    running.add(promise);
    void promise.finally(() => running.delete(promise));
    return promise;
  };

  return {
    tag,
    ledger,
    totals,
    windows,
    anomalies,
    contacts,

    /** Makes the first Contacts (2/3 with an externalId), before any Event is sent. */
    async seed() {
      const ops = Array.from({ length: seedContacts }, (_, i) =>
        upsertOp(i % 3 === 2 ? 'upsert-post' : 'upsert-put', true),
      );
      while (ops.length > 0) {
        const results = await Promise.all(ops.splice(0, lanes).map((op) => run(op)));
        if (results.some((r) => r.abandoned || r.status >= 300)) {
          throw new Error(`could not create the first Contacts: ${JSON.stringify(results)}`);
        }
      }
      if (withExternalId.length === 0) throw new Error('no Contact with an externalId');
    },

    /** Starts the lanes. */
    start() {
      stopping = false;
      nextStartAt = Date.now();
      for (let i = 0; i < lanes; i += 1) keep(lane());
    },

    /** Names the window the next answers are counted in. */
    mark(name) {
      window = name;
    },

    /** Sends `count` arrays of 1,000 Events now, beside the lanes; resolves when they end. */
    sendBig(count, route) {
      return Promise.all(
        Array.from({ length: count }, () =>
          keep(run(eventsOp('array', route ?? pick(['by-contact-id', 'by-external-id']), 1000))),
        ),
      );
    },

    /** Requests in flight now: [{kind, events, ageMs}]. */
    inflight() {
      const now = Date.now();
      return [...inflight].map((t) => ({
        kind: t.kind,
        events: t.events,
        ageMs: now - t.startedAt,
      }));
    },

    /** One single Event, one attempt (5 s): true when answered 202. Counted as a probe. */
    async probe() {
      const op = eventsOp('probe', 'by-contact-id', 1);
      const result = await execute(op, { once: true, timeoutMs: 5_000 });
      return result.status === 202;
    },

    /** Stops starting new requests and waits for those under way (and their resends). */
    async stop() {
      stopping = true;
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
