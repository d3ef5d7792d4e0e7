// What the events benchmark measures: the workload (keys, Contacts, organizations, the Event
// each request records) and every measurement, in the order they run and are shown.

// Each key's read and write budgets refill 100 requests/s (a read burst of 200): 192 keys allow
// 19,200 requests/s, above what nginx alone answers here, so no measurement runs into the budget
// (with 64 keys, reads at 8,400 requests/s got 429s once the bursts were spent).
export const KEYS = 192;
export const CONTACTS = 256;
// Kafka keys organization Events per organization: enough of them to reach the partitions the
// lag consumer samples.
export const ORGANIZATIONS = 48;
export const EVENT_NAME = 'Bench Event';
export const PROPERTIES = { plan: 'pro', amount: 42.5, path: '/checkout', items: ['a-1', 'b-2'] };
/** Access tokens live 900 s: exchanged again before a measurement once older than this. */
export const TOKEN_REFRESH_MS = 600_000;

/**
 * One measurement: a floor (`rows` per bare INSERT) or requests through the ingress (`kind`:
 * what requests.lua sends; `driver: 'sdk'`: sent by the SDK's tracker instead of wrk).
 * @typedef {object} Measurement
 * @property {string} name
 * @property {string} label
 * @property {'floor' | 'service'} group
 * @property {number} [rows] the floor's rows per statement
 * @property {'events' | 'upsert' | 'read'} [kind]
 * @property {string} [route]
 * @property {number} [events] Events per request
 * @property {'sdk'} [driver]
 * @property {boolean} [restart] every service restarted first, untraced
 * @property {boolean} [traced] every service restarted first, tracing as in production
 * @property {number} [relays] events relays it runs with, at least: a second one is started for
 *   it when the stack runs one, and stopped after
 */

/**
 * Every measurement, in the order they run and are shown.
 * @type {Measurement[]}
 */
export const MEASUREMENTS = [
  { name: 'floor-1', label: 'floor: bare INSERT, 1 row', group: 'floor', rows: 1 },
  ...['by-contact-id', 'by-external-id', 'by-email', 'by-organization'].map(
    /** @returns {Measurement} */ (route) => ({
      name: `single-${route.replace(/^by-/, '')}`,
      label: `single Event, ${route}`,
      group: 'service',
      kind: 'events',
      route,
      events: 1,
    }),
  ),
  {
    // by-contact-id again, right before the traced one and after the same restart, untraced:
    // tracing's cost is read from two neighbouring measurements of freshly started services.
    // Against single-contact-id, minutes and three other routes earlier, it also read how far
    // this shared machine had drifted meanwhile (0.75 to 1.14 in runs changing nothing).
    name: 'untraced-contact-id',
    label: 'single Event, by-contact-id, untraced',
    group: 'service',
    kind: 'events',
    route: 'by-contact-id',
    events: 1,
    restart: true,
  },
  {
    // by-contact-id again, every service tracing as the chart has it in production: spans
    // exported over OTLP (to the stack's trace receiver) for the chart's share of new traces.
    name: 'traced-contact-id',
    label: 'single Event, by-contact-id, traced',
    group: 'service',
    kind: 'events',
    route: 'by-contact-id',
    events: 1,
    traced: true,
  },
  { name: 'floor-100', label: 'floor: bare INSERT, 100 rows', group: 'floor', rows: 100 },
  ...[100, 1000].map(
    /** @returns {Measurement} */ (n) => ({
      name: `array-${n}`,
      label: `${n.toLocaleString('en-US')}-Event array, by-contact-id`,
      group: 'service',
      kind: 'events',
      route: 'by-contact-id',
      events: n,
    }),
  ),
  ...[100, 1000].map(
    /** @returns {Measurement} */ (n) => ({
      // The same arrays with a second relay beside the stack's: the outbox's shards split
      // between them, as the chart's two replicas share them.
      name: `array-${n}-two-relays`,
      label: `${n.toLocaleString('en-US')}-Event array, by-contact-id, two relays`,
      group: 'service',
      kind: 'events',
      route: 'by-contact-id',
      events: n,
      relays: 2,
    }),
  ),
  {
    // The same Events as array-100, queued one by one with @herald/client's tracker.track()
    // and sent by its batching tracker (flushAt 100), one tracker per connection.
    name: 'sdk-tracker',
    label: 'SDK tracker, 100-Event batches',
    group: 'service',
    kind: 'events',
    driver: 'sdk',
    route: 'by-contact-id',
    events: 100,
  },
  {
    name: 'upsert',
    label: 'Contact upsert, PUT',
    group: 'service',
    kind: 'upsert',
    route: 'PUT /v1/contacts/{externalId}',
    events: 0,
  },
  {
    name: 'read',
    label: 'Contact read, GET',
    group: 'service',
    kind: 'read',
    route: 'GET /v1/contacts/{externalId}',
    events: 0,
  },
];
export const measurementNames = MEASUREMENTS.map((m) => m.name);
