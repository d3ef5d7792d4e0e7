// What the fault suite's load sends: Contact upserts, single Events, arrays of Events on the four
// Event routes, resends of requests already answered 202 and requests made to be refused, each
// built as an operation the sender carries out.
import { randomUUID } from 'node:crypto';

export const ROUTES = ['by-contact-id', 'by-external-id', 'by-email', 'by-organization'];

/** Sizes of the arrays: mostly small, some large, one in ten the maximum of 1,000. */
export function arraySize(random = Math.random) {
  const r = random();
  if (r < 0.6) return 50 + Math.floor(random() * 151);
  if (r < 0.9) return 200 + Math.floor(random() * 401);
  return 1000;
}

/**
 * What a lane does next, by weight.
 * @type {[string, number][]}
 */
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

/**
 * @template T
 * @param {T[]} list
 * @returns {T}
 */
const pick = (list) => list[Math.floor(Math.random() * list.length)];

/**
 * @typedef {object} Tenant
 * @property {string} tenantId
 * @property {string} clientId
 * @property {string} secret
 * @property {string} token
 * @property {number} tokenExpiresAt
 * @property {string} organization
 *
 * @typedef {object} Contact A Contact known to exist (answered 2xx).
 * @property {string} id
 * @property {string | null} externalId
 * @property {string} email
 *
 * @typedef {object} Sent A body answered 202 that a replay may resend.
 * @property {string} route
 * @property {string} path
 * @property {string} bodyText
 * @property {string[]} keys
 * @property {number} events
 * @property {number} firstSentAt
 *
 * @typedef {object} Load What the driver's parts share: the Tenant, the names it makes, what
 *   it knows exists.
 * @property {Tenant} tenant
 * @property {string} tag       this driver's mark in every key, name and Event
 * @property {number} seq       the last number given to a key or a name
 * @property {Contact[]} contacts
 * @property {Contact[]} withExternalId
 * @property {Sent[]} recent    at most the last 20
 *
 * @typedef {object} Op One request, carried out until answered or given up on.
 * @property {string} kind      upsert-put, upsert-post, single, array, replay, bad or probe
 * @property {string} method
 * @property {string} path
 * @property {string} bodyText
 * @property {string[]} keys    the dedupKeys of its Events
 * @property {number} events    how many Events it holds
 * @property {string} [route]
 * @property {string} [email]   an upsert's Contact email
 * @property {boolean} [designedBad]
 * @property {number} [firstSentAt]
 */

/**
 * A fresh dedupKey (or name) of this driver.
 * @param {Load} load
 */
const nextKey = (load, prefix = 'k') => `${prefix}-${load.tag}-${(load.seq += 1)}`;

/**
 * @param {Load} load
 * @param {string} route
 * @param {Contact} contact
 * @param {string} key
 * @param {number} n
 */
function eventFor(load, route, contact, key, n) {
  const base = {
    eventName: pick(EVENT_NAMES),
    occurredAt: new Date().toISOString(),
    dedupKey: key,
    properties: { chaos: load.tag, n },
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
        organizationExternalId: load.tenant.organization,
        ...(n % 2 === 0 ? { contactId: contact.id } : {}),
        ...base,
      };
  }
}

/**
 * @param {Load} load
 * @param {string} kind
 * @param {string} route
 * @param {number} count
 * @returns {Op}
 */
export function eventsOp(load, kind, route, count) {
  const pool = route === 'by-external-id' ? load.withExternalId : load.contacts;
  const keys = [];
  const events = [];
  for (let i = 0; i < count; i += 1) {
    const key = nextKey(load);
    keys.push(key);
    events.push(eventFor(load, route, pick(pool), key, i));
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

/**
 * An array of 1,000 Events on `route`, else on by-contact-id or by-external-id.
 * @param {Load} load
 * @param {string} [route]
 */
export function bigArrayOp(load, route) {
  return eventsOp(load, 'array', route ?? pick(['by-contact-id', 'by-external-id']), 1000);
}

/**
 * A request that must be refused whole: one Event names no Contact (422) or is invalid (400).
 * @param {Load} load
 * @returns {Op}
 */
function badOp(load) {
  const route = pick(['by-contact-id', 'by-email']);
  const count = 3 + Math.floor(Math.random() * 28);
  const keys = [];
  /** @type {object[]} */
  const events = [];
  for (let i = 0; i < count; i += 1) {
    const key = nextKey(load, 'bad');
    keys.push(key);
    events.push(eventFor(load, route, pick(load.contacts), key, i));
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

/**
 * An upsert of a new Contact or, unless `fresh`, often of one known to exist.
 * @param {Load} load
 * @param {string} kind upsert-put or upsert-post
 * @returns {Op}
 */
export function upsertOp(load, kind, fresh = false) {
  const { contacts, withExternalId } = load;
  const existing = !fresh && Math.random() < 0.6 && contacts.length > 0;
  if (kind === 'upsert-put') {
    const contact = existing && withExternalId.length > 0 ? pick(withExternalId) : null;
    const externalId = contact?.externalId ?? nextKey(load, 'c');
    const email = contact?.email ?? `${externalId}@chaos.example`;
    return {
      kind,
      method: 'PUT',
      path: `/v1/contacts/${encodeURIComponent(externalId)}`,
      bodyText: JSON.stringify({ email, name: `Chaos ${(load.seq += 1)}` }),
      email,
      keys: [],
      events: 0,
    };
  }
  const email = existing ? pick(contacts).email : `${nextKey(load, 'e')}@chaos.example`;
  return {
    kind,
    method: 'POST',
    path: '/v1/contacts',
    bodyText: JSON.stringify({ email, name: `Chaos ${(load.seq += 1)}` }),
    email,
    keys: [],
    events: 0,
  };
}

/**
 * What a lane sends next, drawn from the mix.
 * @param {Load} load
 * @returns {Op}
 */
export function nextOp(load) {
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
    const fresh = load.recent.filter((sent) => Date.now() - sent.firstSentAt < 20_000);
    if (fresh.length > 0) return { kind: 'replay', method: 'POST', ...pick(fresh) };
    kind = 'single';
  }
  if (kind === 'upsert-put' || kind === 'upsert-post') return upsertOp(load, kind);
  if (kind === 'bad') return badOp(load);
  const route = pick(ROUTES);
  return eventsOp(load, kind, route, kind === 'single' ? 1 : arraySize());
}
