// Synthetic but realistic payloads. Everything is marked as load-test traffic and harmless if a
// Journey ever acts on it: ids and emails carry the run id, emails use the reserved domain
// example.com (RFC 2606), phone numbers the fictional +1 NXX-555-01xx range.
import exec from 'k6/execution';

const TIME_ZONES = ['Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'UTC', 'Australia/Sydney'];
const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken'];
const PAGES = ['/', '/pricing', '/docs/getting-started', '/blog/launch', '/checkout'];
const PLANS = ['free', 'starter', 'pro', 'enterprise'];

const pick = (items) => items[Math.floor(Math.random() * items.length)];
const between = (min, max) => min + Math.floor(Math.random() * (max - min + 1));

/** A short id for one test run; all of the run's ids, emails and dedupKeys start with it. */
export function newRunId() {
  return `lt${Date.now().toString(36)}${between(0, 36 ** 4 - 1).toString(36)}`;
}

let counter = 0;
/** Unique in the run: run id, VU, a per-VU counter. */
export function uniqueId(ctx, kind) {
  counter += 1;
  return `${ctx.runId}-${exec.vu.idInTest}-${kind}${counter}`;
}

export function newPerson(ctx, { withExternalId = true } = {}) {
  const id = uniqueId(ctx, 'c');
  return {
    externalId: withExternalId ? id : undefined,
    email: `${id}@loadtest.example.com`,
  };
}

/** An upsert body: the email plus a varying subset of the optional fields. */
export function contactBody(person) {
  const body = { email: person.email, name: `${pick(FIRST_NAMES)} ${between(1, 999)}` };
  if (Math.random() < 0.5) body.timeZone = pick(TIME_ZONES);
  if (Math.random() < 0.3) body.phone = `+1202555${between(100, 199).toString().padStart(4, '0')}`;
  return body;
}

/** Contact Events: what a product backend typically records. */
const CONTACT_EVENTS = [
  () => ['Page Viewed', { path: pick(PAGES), referrer: 'https://www.example.com/' }],
  () => ['Product Viewed', { sku: `SKU-${between(1, 500)}`, price: between(100, 9999) / 100 }],
  () => [
    'Order Completed',
    {
      total: between(1000, 50000) / 100,
      currency: 'EUR',
      items: [{ sku: `SKU-${between(1, 500)}`, quantity: between(1, 3) }],
    },
  ],
  () => ['Email Opened', { campaign: `spring-${between(1, 12)}` }],
  () => ['Subscription Renewed', { plan: pick(PLANS), amount: between(900, 99900) / 100 }],
];
const ORGANIZATION_EVENTS = [
  () => ['Seat Added', { seats: between(2, 200) }],
  () => ['Plan Upgraded', { from: pick(PLANS), to: pick(PLANS) }],
];

function event(ctx, identity, names, eventName) {
  const [name, properties] = pick(names)();
  return {
    ...identity,
    eventName: eventName ?? name,
    occurredAt: new Date().toISOString(),
    // Unique per logical Event; a resend of the same request carries the same one.
    dedupKey: uniqueId(ctx, 'e'),
    properties: { ...properties, loadtestRun: ctx.runId },
  };
}

export const contactEvent = (ctx, identity, eventName) =>
  event(ctx, identity, CONTACT_EVENTS, eventName);
export const organizationEvent = (ctx, identity) => event(ctx, identity, ORGANIZATION_EVENTS);

export const batchSize = (min, max) => between(min, max);

/**
 * Contacts this VU knows: setup()'s seed Contacts (shared by every VU) and the last ones it
 * created itself. Each has `id` and `email`; those upserted by own id also `externalId`.
 */
export class ContactPool {
  constructor(seed, capacity = 200) {
    this.seed = seed;
    this.own = [];
    this.capacity = capacity;
  }

  add(contact) {
    this.own.push(contact);
    if (this.own.length > this.capacity) this.own.shift();
  }

  any() {
    const i = Math.floor(Math.random() * (this.seed.length + this.own.length));
    return i < this.seed.length ? this.seed[i] : this.own[i - this.seed.length];
  }

  /** One with an externalId (the seed Contacts all have one). */
  withExternalId() {
    for (let tries = 0; tries < 4; tries += 1) {
      const c = this.any();
      if (c.externalId) return c;
    }
    return pick(this.seed);
  }

  /** One created by email alone, if this VU made any. */
  emailOnly() {
    const candidates = this.own.filter((c) => !c.externalId);
    return candidates.length ? pick(candidates) : null;
  }
}
