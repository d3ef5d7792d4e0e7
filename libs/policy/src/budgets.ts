import { z } from '@herald/config';
import type { BucketLimits } from './token-bucket.js';

/** Two budgets per API key (docs/api-reference.md#rate-limits). */
export interface RateBudgets {
  /** GET (and HEAD) requests. */
  read: BucketLimits;
  /** Every other method. */
  write: BucketLimits;
}

export type BudgetKind = keyof RateBudgets;

/** Production values; the settings below default to them. */
export const DEFAULT_RATE_BUDGETS: RateBudgets = {
  read: { refillPerSecond: 100, burst: 200 },
  write: { refillPerSecond: 100, burst: 1_000 },
};

const perSecond = (fallback: number) => z.coerce.number().positive().default(fallback);
const burst = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/**
 * The budgets' settings, production values by default. Tests through the ingress run with
 * these; only the policy's own tests pass smaller ones in code.
 */
export const rateBudgetsEnv = {
  RATE_LIMIT_READ_REFILL_PER_SECOND: perSecond(DEFAULT_RATE_BUDGETS.read.refillPerSecond).describe(
    'the read (GET) budget per API key: requests per second, sustained',
  ),
  RATE_LIMIT_READ_BURST: burst(DEFAULT_RATE_BUDGETS.read.burst).describe(
    'the read (GET) budget per API key: requests at once, after a pause',
  ),
  RATE_LIMIT_WRITE_REFILL_PER_SECOND: perSecond(
    DEFAULT_RATE_BUDGETS.write.refillPerSecond,
  ).describe('the write budget per API key: requests per second, sustained'),
  RATE_LIMIT_WRITE_BURST: burst(DEFAULT_RATE_BUDGETS.write.burst).describe(
    'the write budget per API key: requests at once, after a pause',
  ),
};

type RateBudgetsConfig = {
  [K in keyof typeof rateBudgetsEnv]: number;
};

export function rateBudgetsFrom(config: RateBudgetsConfig): RateBudgets {
  return {
    read: {
      refillPerSecond: config.RATE_LIMIT_READ_REFILL_PER_SECOND,
      burst: config.RATE_LIMIT_READ_BURST,
    },
    write: {
      refillPerSecond: config.RATE_LIMIT_WRITE_REFILL_PER_SECOND,
      burst: config.RATE_LIMIT_WRITE_BURST,
    },
  };
}

export const budgetKindOf = (method: string): BudgetKind =>
  method === 'GET' || method === 'HEAD' ? 'read' : 'write';
