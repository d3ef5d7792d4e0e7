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
  // In place in the block: no Buffer view per id.
  const at = next;
  next += 16;
  block.writeUIntBE(now, at, 6);
  block[at + 6] = (block[at + 6]! & 0x0f) | 0x70;
  block[at + 8] = (block[at + 8]! & 0x3f) | 0x80;
  const hex = block.toString('hex', at, at + 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
