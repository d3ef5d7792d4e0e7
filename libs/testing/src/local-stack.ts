// The local stack the tests run against: its Redis, and the data folder with the operator token
// it generated (its PostgreSQL and Kafka are in database.ts and kafka.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The local stack's Redis (a single node). */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:56379';

// This file is libs/testing/src/local-stack.ts, or dist/local-stack.js once built.
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The local stack's data folder (HERALD_DATA_DIR, as tools/stack/src/config.mjs reads it). */
export const STACK_DATA_DIR = path.resolve(repoRoot, process.env.HERALD_DATA_DIR || '.herald');

/** The operator API's token: ADMIN_TOKEN, else the one the local stack wrote. */
export function stackAdminToken(): string {
  return (
    process.env.ADMIN_TOKEN || readFileSync(path.join(STACK_DATA_DIR, 'admin-token'), 'utf8').trim()
  );
}
