import { hash } from 'node:crypto';
import { taggedKey } from '@herald/redis';

/** A dedupKey is held for 60 s from the first time it was recorded. */
export const DEDUP_WINDOW_SECONDS = 60;

/**
 * What a dedup claim holds of a dedupKey (in `dedup_claims.dedup_key` and in the fast path's
 * Redis key): its SHA-256, hex. A dedupKey is the caller's text and may carry personal data; the
 * hash does not, so a claim needs no erasure and simply lasts its window (60 s).
 */
export function hashDedupKey(dedupKey: string): string {
  return hash('sha256', dedupKey, 'hex');
}

/** The fast path's Redis key of a dedupKey: the Tenant as hash tag, then the key's hash. */
export function dedupCacheKey(tenantId: string, dedupKey: string): string {
  return dedupCacheKeyOfHash(tenantId, hashDedupKey(dedupKey));
}

/** dedupCacheKey from the key's hash already computed (hashDedupKey). */
export function dedupCacheKeyOfHash(tenantId: string, dedupKeyHash: string): string {
  return taggedKey('dedup', tenantId, dedupKeyHash);
}
