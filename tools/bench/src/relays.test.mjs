// The relays' shares of publishing in the events benchmark, from their metrics pages.
import assert from 'node:assert/strict';
import test from 'node:test';
import { MEASUREMENTS } from './events-measurements.mjs';
import { evaluate } from './events-targets.mjs';
import { isRelay, publishedTotal, relayShares } from './relays.mjs';

const page = (lines) => `${lines.join('\n')}\n`;

test('publishedTotal sums the events outbox series of outbox_published_total, and nothing else', () => {
  const text = page([
    '# HELP outbox_published_total Outbox messages published',
    '# TYPE outbox_published_total counter',
    'outbox_published_total{outbox_name="events",messaging_destination_name="herald.events.recorded",otel_scope_name="@herald/outbox"} 1200',
    'outbox_published_total{outbox_name="events",messaging_destination_name="herald.other",otel_scope_name="@herald/outbox"} 34',
    'outbox_published_total{outbox_name="contacts",messaging_destination_name="herald.contacts.changed"} 99',
    'outbox_publish_errors_total{outbox_name="events",error_type="kafka"} 7',
    'outbox_published_total_created{outbox_name="events"} 1795868852',
  ]);
  assert.equal(publishedTotal(text), 1234);
});

test('publishedTotal is 0 before a relay has published anything', () => {
  assert.equal(publishedTotal(page(['outbox_relay_shards{outbox_name="events"} 32'])), 0);
});

test('relayShares splits what was published between two readings, by relay', () => {
  const shares = relayShares(
    { 'events-relay': 1000, 'events-relay-2': 0 },
    { 'events-relay-2': 3000, 'events-relay': 4000 },
  );
  assert.deepEqual(shares, [
    { name: 'events-relay', published: 3000, share: 0.5 },
    { name: 'events-relay-2', published: 3000, share: 0.5 },
  ]);
});

test('relayShares counts a relay started or restarted in between from zero', () => {
  const shares = relayShares(
    { 'events-relay': 5000 },
    { 'events-relay': 100, 'events-relay-2': 300 },
  );
  assert.deepEqual(
    shares.map((s) => [s.name, s.published, s.share]),
    [
      ['events-relay', 100, 0.25],
      ['events-relay-2', 300, 0.75],
    ],
  );
});

test('relayShares has no share to give when nothing was published', () => {
  const [only] = relayShares({ 'events-relay': 10 }, { 'events-relay': 10 });
  assert.equal(only.published, 0);
  assert.ok(Number.isNaN(only.share));
});

test('isRelay names the stack relay and the ones beside it, not other processes', () => {
  assert.deepEqual(
    ['events-relay', 'events-relay-2', 'events-relay-12', 'events', 'events-relayx', 'relay'].map(
      isRelay,
    ),
    [true, true, true, false, false, false],
  );
});

test('a measurement with two relays is held to no failure, the publish lag and a flat outbox only', () => {
  const m = MEASUREMENTS.find((x) => x.name === 'array-1000-two-relays');
  assert.equal(m?.relays, 2);
  /** @type {any} */
  const floor = { name: 'floor-100', group: 'floor', eventsPerSecond: 100_000 };
  /** @type {any} */
  const r = {
    ...m,
    failed: 0,
    requestsPerSecond: 20,
    eventsPerSecond: 20_000,
    lag: { published: 5000, p50: 90, p99: 1400, max: 1800 },
    outbox: { start: 10, max: 40_000, end: 30 },
  };
  evaluate(r, { 'floor-100': floor });
  assert.deepEqual(
    r.targets.map((t) => [t.what, t.pass]),
    [
      ['failed requests = 0', true],
      ['lag p99 ≤ 1000 ms', false],
      ['outbox flat', true],
    ],
  );
  assert.equal(r.pass, false);
  assert.equal(r.floorRatio, 0.2);
});

test('the two-relay measurements follow the one-relay arrays they repeat', () => {
  const names = MEASUREMENTS.map((x) => x.name);
  for (const n of [100, 1000]) {
    const one = MEASUREMENTS.find((x) => x.name === `array-${n}`);
    const two = MEASUREMENTS.find((x) => x.name === `array-${n}-two-relays`);
    assert.deepEqual(
      { ...two, name: one?.name, label: one?.label, relays: undefined },
      {
        ...one,
        relays: undefined,
      },
    );
    assert.ok(names.indexOf(two.name) > names.indexOf(one.name));
  }
});
