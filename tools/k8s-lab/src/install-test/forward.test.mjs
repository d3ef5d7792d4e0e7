// The Kafka forwarder's ApiVersions cap: `node --test tools/k8s-lab/src/install-test/forward.test.mjs`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capApiVersions } from './forward.mjs';

/**
 * An ApiVersions answer (size, correlation id, error_code, the versions, throttle_time_ms).
 * @param {number} apiVersion
 * @param {[number, number, number][]} apis api_key, min_version, max_version
 */
function answer(apiVersion, apis) {
  const flexible = apiVersion >= 3;
  const parts = [Buffer.alloc(4), Buffer.from([0, 0, 0, 7]), Buffer.alloc(2)];
  if (flexible) parts.push(Buffer.from([apis.length + 1]));
  else parts.push(Buffer.from([0, 0, 0, apis.length]));
  for (const [key, min, max] of apis) {
    const entry = Buffer.alloc(6);
    entry.writeInt16BE(key, 0);
    entry.writeInt16BE(min, 2);
    entry.writeInt16BE(max, 4);
    parts.push(entry);
    // A tagged field of 2 bytes on the first entry, none on the others.
    if (flexible) parts.push(key === 0 ? Buffer.from([1, 5, 2, 9, 9]) : Buffer.from([0]));
  }
  parts.push(Buffer.alloc(4), ...(flexible ? [Buffer.from([0])] : []));
  const frame = Buffer.concat(parts);
  frame.writeInt32BE(frame.length - 4, 0);
  return frame;
}

/** max_version by api_key, read back from answer()'s layout. */
function maxVersions(frame, apiVersion, count) {
  const flexible = apiVersion >= 3;
  let offset = flexible ? 11 : 14;
  const out = new Map();
  for (let i = 0; i < count; i += 1) {
    out.set(frame.readInt16BE(offset), frame.readInt16BE(offset + 4));
    offset += 6;
    if (flexible) offset += frame[offset] === 0 ? 1 : 5;
  }
  return out;
}

for (const apiVersion of [0, 3]) {
  test(`ApiVersions v${apiVersion}: Metadata and FindCoordinator are capped at their newest non-flexible versions, the others stay`, () => {
    const apis = /** @type {[number, number, number][]} */ ([
      [0, 0, 11],
      [3, 0, 12],
      [10, 0, 6],
      [18, 0, 4],
    ]);
    const frame = answer(apiVersion, apis);
    const size = frame.length;
    const capped = capApiVersions(frame, apiVersion);
    assert.equal(capped.length, size);
    assert.deepEqual(
      maxVersions(capped, apiVersion, apis.length),
      new Map([
        [0, 11],
        [3, 8],
        [10, 2],
        [18, 4],
      ]),
    );
  });
}
