// The publishing target: every relay's CPU and the broker's, per recorded Event, against the
// same path with kafkajs and one relay.
import assert from 'node:assert/strict';
import test from 'node:test';
import { PUBLISH_CPU_KAFKAJS, evaluate, publishCpu } from './events-targets.mjs';

const base = { kind: 'events', events: 100 };

test('publishCpu sums every relay, divides by the Events of a request, and holds arrays to the kafkajs path', () => {
  const got = publishCpu({
    ...base,
    name: 'array-100-two-relays',
    cpuMsPerRequest: { 'events-relay': 0.5, 'events-relay-2': 0.25, kafka: 0.25, events: 9 },
  });
  const before = PUBLISH_CPU_KAFKAJS['array-100'].relay + PUBLISH_CPU_KAFKAJS['array-100'].broker;
  assert.equal(got?.relay, 7.5);
  assert.equal(got?.broker, 2.5);
  assert.equal(got?.total, 10);
  assert.equal(got?.before, before);
  assert.equal(got?.ratio, 10 / before);
});

test('publishCpu has no reference for single Events, and nothing for floors or reads', () => {
  const single = publishCpu({
    kind: 'events',
    events: 1,
    name: 'single-contact-id',
    cpuMsPerRequest: { 'events-relay': 0.02, kafka: 0.01 },
  });
  assert.equal(single?.ratio, null);
  assert.ok(Math.abs((single?.total ?? 0) - 30) < 1e-9);
  assert.equal(publishCpu({ name: 'floor-100', cpuMsPerRequest: { kafka: 1 } }), null);
  assert.equal(
    publishCpu({ kind: 'read', events: 0, name: 'read', cpuMsPerRequest: { kafka: 1 } }),
    null,
  );
});

test('evaluate fails an array whose relay and broker cost more than a third of the kafkajs path', () => {
  /** @type {any} */
  const floor = {
    name: 'floor-100',
    group: 'floor',
    rows: 100,
    eventsPerSecond: 80000,
    cpuMsPerRequest: {},
  };
  /** @param {number} relayMs @returns {any} a Result with the fields evaluate reads */
  const measured = (relayMs) => ({
    ...base,
    name: 'array-100',
    group: 'service',
    failed: 0,
    requestsPerSecond: 400,
    eventsPerSecond: 40000,
    p99: 100,
    lag: { p99: 500 },
    outbox: { start: 0, end: 0 },
    cpuMsPerRequest: { 'events-relay': relayMs, kafka: 0.3 },
  });
  const cheap = measured(0.5);
  const dear = measured(2);
  for (const r of [cheap, dear]) evaluate(r, { 'floor-100': floor, 'array-100': r });
  /** @param {any} r */
  const check = (r) => r.targets.find((t) => t.what.startsWith('relay+broker'));
  assert.equal(check(cheap).pass, true);
  assert.equal(check(dear).pass, false);
  assert.equal(dear.pass, false);
});
