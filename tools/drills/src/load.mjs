// The restore drill's load: one fresh Tenant and one Contact, and Events about that Contact sent
// steadily through the ingress on three of the Event routes, single ones and arrays of up to 50,
// every Event with its own dedupKey. It is the fault suite's sender (tools/chaos), so it resends
// as a client should, and its ledger holds the moment each Event was answered 202.
import { newTenant } from '@herald/chaos/api.mjs';
import { createSession } from '@herald/chaos/driver.mjs';
import { createPacer } from '@herald/chaos/pacing.mjs';
import { eventsOp, upsertOp } from '@herald/chaos/requests.mjs';

/** The routes that name a Contact: each of their Events is in that Contact's export. */
const CONTACT_ROUTES = ['by-contact-id', 'by-external-id', 'by-email'];

/**
 * @typedef {object} DrillLoad
 * @property {string} tenantId
 * @property {string} contactId
 * @property {import('@herald/chaos/bookkeeping.mjs').Ledger} ledger  `acked`: dedupKey -> when
 *   it was answered 202 (ms since the epoch)
 * @property {Map<string, string>} names  dedupKey -> eventName, of every Event sent
 * @property {string[]} anomalies  answers the load did not expect
 * @property {() => void} start    starts the lanes
 * @property {() => Promise<void>} stop  stops sending and waits for the requests under way
 */

/**
 * Makes the Tenant and its Contact; `start()` begins the Events.
 * @param {{ lanes?: number, ratePerSecond?: number }} [options]
 * @returns {Promise<DrillLoad>}
 */
export async function createDrillLoad({ lanes = 4, ratePerSecond = 10 } = {}) {
  const tenant = await newTenant(`restore-drill-${new Date().toISOString()}`);
  const { load, ledger, answers, sender } = createSession({
    tenant,
    retryWindowMs: 45_000,
    attemptTimeoutMs: 10_000,
  });
  const { execute } = sender;

  const upsert = await execute(upsertOp(load, 'upsert-put', true));
  const contact = load.contacts[0];
  if (!contact) throw new Error(`could not create the Contact (answered ${upsert.status})`);

  /** @type {Map<string, string>} */
  const names = new Map();
  const next = () => {
    const count = Math.random() < 0.3 ? 1 : 2 + Math.floor(Math.random() * 49);
    const route = CONTACT_ROUTES[Math.floor(Math.random() * CONTACT_ROUTES.length)];
    const op = eventsOp(load, count === 1 ? 'single' : 'array', route, count);
    /** @type {{ dedupKey: string, eventName: string }[]} */
    const events = [JSON.parse(op.bodyText)].flat();
    for (const event of events) names.set(event.dedupKey, event.eventName);
    return execute(op);
  };
  const pacer = createPacer({ lanes, ratePerSecond, next });

  return {
    tenantId: tenant.tenantId,
    contactId: contact.id,
    ledger,
    names,
    anomalies: answers.anomalies,
    start: pacer.start,
    stop: pacer.stop,
  };
}
