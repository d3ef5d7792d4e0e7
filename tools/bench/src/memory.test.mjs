// The benchmark's memory target: each of Herald's own processes passes when its RSS stayed at
// most 256 MiB over the run; the infrastructure's figures are shown without a target.
import assert from 'node:assert/strict';
import test from 'node:test';
import { memoryTargets } from './events-targets.mjs';

test('memoryTargets marks Herald processes by their maximum, and leaves the rest unmarked', () => {
  const got = memoryTargets({
    postgres: { start: 200, max: 700, end: 650 },
    events: { start: 180, max: 256, end: 200 },
    'events-relay': { start: 150, max: 256.5, end: 250 },
    auth: { start: 260, max: 270, end: 200 },
  });
  assert.deepEqual(got, {
    postgres: { start: 200, max: 700, end: 650 },
    events: { start: 180, max: 256, end: 200, pass: true },
    'events-relay': { start: 150, max: 256.5, end: 250, pass: false },
    auth: { start: 260, max: 270, end: 200, pass: false },
  });
});

test('memoryTargets holds the relays beside the first to the same maximum', () => {
  const got = memoryTargets({
    'events-relay-2': { start: 120, max: 260, end: 200 },
    'events-relay-3': { start: 120, max: 200, end: 180 },
  });
  assert.equal(got['events-relay-2'].pass, false);
  assert.equal(got['events-relay-3'].pass, true);
});
