// The restore drill's verdict on made-up evidence (node --test).
import assert from 'node:assert/strict';
import test from 'node:test';
import { judge, windowOf } from './verdict.mjs';

const backup = { startedAt: 1_000, endedAt: 2_000 };
const names = new Map([
  ['a', 'Signed Up'],
  ['b', 'Page Viewed'],
  ['c', 'Page Viewed'],
  ['d', 'Signed Up'],
  ['e', 'Signed Up'],
]);
/** @param {string[]} keys */
const exportOf = (keys) => keys.map((k) => ({ dedupKey: k, eventName: names.get(k) ?? '?' }));

test('an answer is before the backup when it came before pg_basebackup started', () => {
  assert.equal(windowOf(999, backup), 'before');
  assert.equal(windowOf(1_000, backup), 'during');
  assert.equal(windowOf(2_000, backup), 'during');
  assert.equal(windowOf(2_001, backup), 'after');
});

test('answered before the start: present once passes; during or after: absent is fine', () => {
  const acked = new Map([
    ['a', 500],
    ['b', 900],
    ['c', 1_500],
    ['d', 2_500],
  ]);
  const v = judge({ acked, names }, backup, exportOf(['a', 'b', 'c', 'e']));
  assert.deepEqual(v.answered, { before: 2, during: 1, after: 1 });
  assert.deepEqual(v.restored, { before: 2, during: 1, after: 0 });
  assert.equal(v.unanswered, 1);
  assert.equal(v.ok, true);
});

test('answered before the start and absent is missing', () => {
  const acked = new Map([
    ['a', 500],
    ['b', 900],
  ]);
  const v = judge({ acked, names }, backup, exportOf(['a']));
  assert.equal(v.missing, 1);
  assert.deepEqual(v.examples, ['b missing']);
  assert.equal(v.ok, false);
});

test('present twice is doubled, in any window', () => {
  const acked = new Map([
    ['a', 500],
    ['d', 2_500],
  ]);
  const v = judge({ acked, names }, backup, exportOf(['a', 'd', 'd']));
  assert.equal(v.doubled, 1);
  assert.equal(v.restored.after, 0);
  assert.equal(v.ok, false);
});

test('present under another name is renamed', () => {
  const acked = new Map([['a', 500]]);
  const v = judge({ acked, names }, backup, [{ dedupKey: 'a', eventName: 'Page Viewed' }]);
  assert.equal(v.renamed, 1);
  assert.equal(v.ok, false);
});

test('nothing answered before the backup proves nothing', () => {
  const acked = new Map([['c', 1_500]]);
  const v = judge({ acked, names }, backup, exportOf(['c']));
  assert.equal(v.missing, 0);
  assert.equal(v.ok, false);
});
