// Faults that are not crashes: a link that gets slow, a partition that drops data without closing
// connections, connections reset, bandwidth squeezed to a trickle. Each is a Toxiproxy toxic on
// the links of one connection (tools/stack/src/toxiproxy.mjs), so it hits that connection and
// nothing else. The stack's processes reach their dependencies through the links from the first
// network fault of a run to the end of the run (restoreStack), which restarts them once each way.
import { up } from '@herald/stack/index.mjs';
import {
  KAFKA_LINK,
  addToxic,
  faultProxyOn,
  healLinks,
  linkName,
  stopToxiproxy,
} from '@herald/stack/toxiproxy.mjs';
import { ensureSuiteRelays, suiteRelayNames } from './relays.mjs';

/**
 * Routes the stack's processes through the fault proxy (true) or straight to their
 * dependencies again (false); `up` restarts the processes whose variables change.
 * @param {boolean} on
 */
export async function linksThroughProxy(on) {
  if (on === faultProxyOn()) return;
  if (on) process.env.HERALD_FAULT_PROXY = '1';
  else delete process.env.HERALD_FAULT_PROXY;
  await up({ build: false, quiet: true });
  await ensureSuiteRelays();
  if (!on) await stopToxiproxy();
}

/** The connections a network fault can hit, by the links they run through. */
const CONNECTIONS = {
  'events-postgres': {
    what: 'events service ↔ PostgreSQL',
    component: 'postgres',
    links: () => [linkName('events', 'postgres')],
    // Three minutes of Event requests answered 503: the events process's 5xx ratio.
    alerts: { 'partition-3m': [{ alertname: 'HeraldHttpErrorRatioHigh', job: 'events' }] },
  },
  'events-contacts': {
    what: 'events service ↔ contacts service',
    component: 'contacts',
    links: () => [linkName('events', 'contacts')],
  },
  kafka: {
    what: 'the relays (every Kafka client) ↔ Kafka',
    component: 'kafka',
    links: () => [KAFKA_LINK],
    // Nothing is published: the oldest waiting message passes 120 s.
    alerts: {
      'partition-3m': [{ alertname: 'HeraldOutboxOldestRowTooOld', outbox_name: 'events' }],
    },
  },
  redis: {
    what: 'every service and relay ↔ Redis',
    component: 'redis',
    links: () =>
      ['auth', 'contacts', 'events', 'billing', ...suiteRelayNames()].map((caller) =>
        linkName(caller, 'redis'),
      ),
  },
};

/** What is done to the connection: a Toxiproxy toxic, held so long. */
const KINDS = {
  latency: {
    title: '+200 ms (±50 ms) each way',
    holdMs: 10_000,
    toxic: { type: 'latency', attributes: { latency: 200, jitter: 50 } },
  },
  'latency-2s': {
    title: '+2 s (±500 ms) each way',
    holdMs: 10_000,
    toxic: { type: 'latency', attributes: { latency: 2_000, jitter: 500 } },
  },
  partition: {
    unreachable: true,
    title: 'partitioned for 30 s: data dropped, connections left open',
    holdMs: 30_000,
    toxic: { type: 'timeout', attributes: { timeout: 0 } },
  },
  'partition-3m': {
    unreachable: true,
    title: 'partitioned for 3 min: data dropped, connections left open',
    holdMs: 180_000,
    toxic: { type: 'timeout', attributes: { timeout: 0 } },
  },
  reset: {
    unreachable: true,
    title: 'every connection reset (TCP RST) as soon as it carries data, for 5 s',
    holdMs: 5_000,
    toxic: { type: 'reset_peer', attributes: { timeout: 0 } },
  },
  trickle: {
    title: 'bandwidth squeezed to 1 KB/s each way for 10 s',
    holdMs: 10_000,
    toxic: { type: 'bandwidth', attributes: { rate: 1 } },
  },
};

/**
 * Every connection with every kind: `events-postgres-partition`, `kafka-latency-2s`, …
 * @type {import('./faults.mjs').Fault[]}
 */
export const networkFaults = Object.entries(CONNECTIONS).flatMap(([connection, c]) =>
  Object.entries(KINDS).map(([kind, k]) => ({
    name: `${connection}-${kind}`,
    component: c.component,
    title: `${c.what}: ${k.title}`,
    holdMs: k.holdMs,
    network: true,
    // Redis not answering at all: the rate-limit guard serves without a budget meanwhile.
    expectFailOpen: connection === 'redis' && k.unreachable === true,
    // The alerts it must raise in the local Prometheus (checked by the longer profiles).
    alerts: c.alerts?.[kind],
    prepare: () => linksThroughProxy(true),
    async inject() {
      const links = c.links();
      for (const link of links) await addToxic(link, k.toxic);
      return `${k.toxic.type} ${JSON.stringify(k.toxic.attributes)} on ${links.join(', ')}`;
    },
    recover: () => healLinks(),
  })),
);

/**
 * The network faults `npm test` runs (tests/resilience), about 3 minutes in all: a partition of
 * the database, of Kafka and of Redis, a slow contacts service and reset database connections.
 * `npm run chaos` runs every one.
 */
export const SHORT_NETWORK_FAULTS = [
  'events-postgres-partition',
  'events-postgres-reset',
  'events-contacts-latency-2s',
  'kafka-partition',
  'redis-partition',
];
