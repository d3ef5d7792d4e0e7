import { randomFillSync } from 'node:crypto';

// Random bytes are drawn in blocks: one getrandom call per 256 ids instead of one per id.
const BLOCK_IDS = 256;
const block = Buffer.alloc(16 * BLOCK_IDS);
let next = block.length;

/**
 * A UUID version 7 (RFC 9562): the Unix time in milliseconds, then 74 random bits. Rows keyed by
 * it are inserted at the right edge of their primary-key index, where a random (version 4) key
 * lands on a different page each time, and every such page written after a checkpoint is copied
 * whole into the WAL. Ids made in one millisecond are not ordered among themselves.
 */
export function timeOrderedUuid(now: number = Date.now()): string {
  if (next === block.length) {
    randomFillSync(block);
    next = 0;
  }
  const bytes = block.subarray(next, next + 16);
  next += 16;
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
