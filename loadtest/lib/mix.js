// The traffic mix: what one iteration does, by weight per 100 iterations. Modeled on a product
// backend integrating Herald: mostly single Events as users act, batch jobs sending arrays, profile
// syncs, sign-ups, some reads, and the odd retry and out-of-order Event.
import { organizationExternalId } from './config.js';
import * as contacts from '../flows/contacts.js';
import * as events from '../flows/events.js';

// writes/reads: requests per iteration against each per-key rate budget, for the budget check.
const ALL = [
  { name: 'event by external id', weight: 26, writes: 1, run: events.single('by-external-id') },
  { name: 'event by contact id', weight: 12, writes: 1, run: events.single('by-contact-id') },
  { name: 'event by email', weight: 8, writes: 1, run: events.single('by-email') },
  {
    name: 'organization event',
    weight: 5,
    writes: 1,
    run: events.organization,
    needsOrganization: true,
  },
  { name: 'array by external id', weight: 4, writes: 1, run: events.batch('by-external-id') },
  { name: 'array by contact id', weight: 4, writes: 1, run: events.batch('by-contact-id') },
  { name: 'contact update', weight: 12, writes: 1, run: contacts.update },
  { name: 'sign-up and first event', weight: 5, writes: 2, run: events.signUp },
  { name: 'contact by email', weight: 4, writes: 1, run: contacts.upsertByEmail },
  { name: 'read by external id', weight: 12, reads: 1, run: contacts.read },
  { name: 'read by id', weight: 5, reads: 1, run: contacts.readById },
  { name: 'event before its contact', weight: 1, writes: 3, run: events.beforeContact },
  { name: 'event sent twice', weight: 2, writes: 2, run: events.sentTwice },
];

export const MIX = ALL.filter((f) => !f.needsOrganization || organizationExternalId);

/**
 * The flows in a fixed interleaved order (smooth weighted round robin), so every run of
 * sum(weights) consecutive iterations holds each flow exactly `weight` times: the mix is exact
 * even in a short smoke run, and every flow runs in the first 100 iterations.
 */
function interleave(flows) {
  const total = flows.reduce((s, f) => s + f.weight, 0);
  const current = flows.map(() => 0);
  const order = [];
  for (let n = 0; n < total; n += 1) {
    let best = 0;
    flows.forEach((f, i) => {
      current[i] += f.weight;
      if (current[i] > current[best]) best = i;
    });
    current[best] -= total;
    order.push(flows[best]);
  }
  return order;
}

const ORDER = interleave(MIX);

/** The flow of the n-th iteration of the test. */
export const flowFor = (n) => ORDER[n % ORDER.length];

/** Requests per iteration against each budget, averaged over the mix. */
export function requestsPerIteration() {
  const total = MIX.reduce((s, f) => s + f.weight, 0);
  const avg = (field) => MIX.reduce((s, f) => s + f.weight * (f[field] ?? 0), 0) / total;
  return { writes: avg('writes'), reads: avg('reads') };
}
