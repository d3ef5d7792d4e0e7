// kafka-publish's pure parts: the calls a variant makes, the choice of the cheapest variant,
// the candidates' figures against the relay today, their table and chart rows, the engines check
// of the privately installed clients and the Java client's partition of a key.
import assert from 'node:assert/strict';
import test from 'node:test';
import { murmur2 } from '@herald/kafka';
import { javaPartition } from './kafka-candidates.mjs';
import { satisfiesEngines } from './kafka-clients.mjs';
import { callsOf, cheapest, combined } from './kafka-publish-measure.mjs';
import {
  candidateChartRows,
  candidateNotes,
  candidateTable,
  measuredResult,
  withRatios,
} from './kafka-publish-report.mjs';
import { ceiling, chartData } from './kafka-publish.mjs';

/** A measurement of `messages` over `seconds` with the given CPU per message. */
const measured = (name, messages, seconds, producer, broker, latencies = [10, 20]) => ({
  name,
  messages,
  messagesPerSecond: messages / seconds,
  latencies,
  producerUsPerMessage: producer,
  brokerUsPerMessage: broker,
});

test('a variant calls with consecutive batches concatenated, or refuses a size that does not fit', () => {
  const batches = [
    [1, 2],
    [3, 4],
    [5, 6],
    [7, 8],
  ];
  assert.deepEqual(callsOf(batches, 2), batches);
  assert.deepEqual(callsOf(batches, 4), [
    [1, 2, 3, 4],
    [5, 6, 7, 8],
  ]);
  assert.throws(() => callsOf(batches, 3), /do not make calls of 3/);
  assert.throws(() => callsOf(batches, 0));
});

test('passes of one variant combine by messages, and the cheapest is the least producer and broker CPU', () => {
  const both = combined([measured('b', 1000, 1, 10, 2), measured('b', 3000, 2, 20, 6, [30])]);
  assert.equal(both.messages, 4000);
  assert.equal(both.messagesPerSecond, 4000 / 3);
  assert.equal(both.producerUsPerMessage, (10 * 1000 + 20 * 3000) / 4000);
  assert.equal(both.brokerUsPerMessage, (2 * 1000 + 6 * 3000) / 4000);
  assert.deepEqual(both.latencies, [10, 20, 30]);
  const tried = [
    measured('b', 1000, 1, 20, 2),
    measured('b', 1000, 1, 12, 9),
    measured('b', 1000, 1, 15, 5),
  ];
  assert.equal(cheapest(tried), 2);
  // One that sent nothing has no cost and is never the cheapest.
  assert.equal(cheapest([measured('b', 0, 1, NaN, NaN), ...tried]), 3);
});

/** The four candidates as the benchmark reports them, one not installed. */
function candidates() {
  const base = (name, label, extra) => ({ name, label, version: '1.0.0', ...extra });
  return withRatios([
    measuredResult(
      base('relay', 'the relay today', { settings: 'today', messagesPerSend: 1000, inFlight: 1 }),
      [measured('relay', 40_000, 1, 20, 4, [12, 14]), measured('relay', 60_000, 1, 22, 2, [16])],
    ),
    measuredResult(
      base('kafkajs-tuned', 'kafkajs tuned', {
        settings: '5,000 per call',
        messagesPerSend: 5000,
        inFlight: 2,
        tried: [
          { settings: 'a', messagesPerSecond: 1, producerUsPerMessage: 20, brokerUsPerMessage: 3 },
        ],
        partitioning: { probed: 64, asJava: 64 },
      }),
      [measured('kafkajs-tuned', 50_000, 1, 18, 3)],
    ),
    measuredResult(
      base('platformatic', '@platformatic/kafka', {
        settings: 'x',
        messagesPerSend: 1000,
        inFlight: 1,
        partitioning: { probed: 64, asJava: 30 },
      }),
      [measured('platformatic', 100_000, 1, 4, 2)],
    ),
    {
      ...base('confluent', '@confluentinc/kafka-javascript'),
      installed: false,
      reason: 'not installed: its native build failed',
    },
  ]);
}

test("each candidate's producer and broker CPU is compared with the relay's today", () => {
  const [today, tuned, platformatic, confluent] = candidates();
  assert.equal(today.producerUsPerMessage, 21);
  assert.equal(today.brokerUsPerMessage, 3);
  assert.equal(today.messagesPerSecond, 50_000);
  assert.deepEqual(
    today.rounds.map((r) => [r.round, r.p50]),
    [
      [1, 12],
      [2, 16],
    ],
  );
  assert.equal(today.latency.count, 3);
  assert.equal(today.cpuUsPerMessage, 24);
  assert.equal(today.cpuRatio, 1);
  assert.equal(tuned.cpuRatio, 21 / 24);
  assert.equal(platformatic.cpuRatio, 6 / 24);
  assert.ok(Number.isNaN(confluent.cpuRatio));
  // Without a baseline, no ratio at all.
  assert.ok(withRatios([tuned]).every((r) => Number.isNaN(r.cpuRatio)));
});

test('the table has a row per candidate and says which one is not installed', () => {
  const lines = candidateTable(candidates()).split('\n');
  assert.equal(lines.length, 2 + 4);
  assert.match(lines[0], /p50 ms per call .* CPU vs the relay today/);
  assert.equal(
    lines[2],
    '| the relay today 1.0.0 | 1,000 × 1 | 21.0 | 3.0 | 50000 | 14.0 | 16.0 | 1.00× |',
  );
  assert.match(
    lines[3],
    /^\| kafkajs tuned 1\.0\.0 \| 5,000 × 2 \| 18\.0 \| 3\.0 \| .* \| 0\.88× \|$/,
  );
  assert.match(lines[5], /^\| @confluentinc\/kafka-javascript 1\.0\.0 \| not installed \| n\/a/);
  const notes = candidateNotes(candidates());
  assert.match(notes[1], /cheapest of a: 23\.0 µs.*64\/64 keys in the Java client's partition$/);
  assert.match(notes[2], /30\/64 keys .* it partitions differently$/);
  assert.equal(notes[3], '@confluentinc/kafka-javascript: not installed: its native build failed');
});

test('the chart adds the measured candidates after the ceiling, on its scale', () => {
  const results = candidates();
  const rows = candidateChartRows(results);
  assert.deepEqual(
    rows.map((r) => [r.name, r.group, r.primary.value]),
    [
      ['candidate-relay', 'candidate', 24],
      ['candidate-kafkajs-tuned', 'candidate', 21],
      ['candidate-platformatic', 'candidate', 6],
    ],
  );
  const publish = {
    startedAt: '2026-01-01T00:00:00.000Z',
    cores: 2,
    seconds: 10,
    batch: 1000,
    partitions: 12,
    messagesPerSecond: 50_000,
    producerUsPerMessage: 21,
    brokerUsPerMessage: 3,
    latency: { p50: 14, p99: 16 },
  };
  const withCandidates = chartData({ ...publish, ceiling: ceiling(publish), candidates: results });
  const without = chartData({ ...publish, ceiling: ceiling(publish) });
  assert.deepEqual(
    withCandidates.measurements.slice(0, without.measurements.length),
    without.measurements,
  );
  assert.deepEqual(withCandidates.measurements.slice(without.measurements.length), rows);
});

test('the clients install only on a Node their engines field accepts', () => {
  const range = '>= 22.22.0 || >= 24.6.0';
  assert.equal(satisfiesEngines(range, '24.21.0'), true);
  assert.equal(satisfiesEngines(range, '22.22.0'), true);
  assert.equal(satisfiesEngines(range, '22.21.9'), false);
  assert.equal(satisfiesEngines(range, '20.19.0'), false);
  assert.equal(satisfiesEngines('>=18.0.0', '20.19.0'), true);
  // A range in another form is left to the import to judge.
  assert.equal(satisfiesEngines('^20 || ^22', '18.0.0'), true);
  assert.equal(satisfiesEngines(undefined, '18.0.0'), true);
});

test("a key's partition is the Java client's: murmur2 without its sign bit, modulo the partitions", () => {
  // Kafka's own test vectors of Utils.murmur2 (the Java client's).
  assert.equal(murmur2('21'), -973932308);
  assert.equal(murmur2('abc'), 479470107);
  assert.equal(javaPartition(murmur2, '21', 12), (-973932308 & 0x7fffffff) % 12);
  assert.equal(javaPartition(murmur2, 'abc', 12), 479470107 % 12);
  // Not the unsigned hash a client may use instead: that differs for 12 partitions.
  assert.notEqual(javaPartition(murmur2, '21', 12), (-973932308 >>> 0) % 12);
});
