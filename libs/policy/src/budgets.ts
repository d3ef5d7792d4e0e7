import { z } from '@herald/config';
import type { BucketLimits } from './token-bucket.js';

/** spec 8 / decisions F: two budgets per API key. */
export interface RateBudgets {
  /** GET (and HEAD) requests. */
  read: BucketLimits;
  /** Every other method. */
  write: BucketLimits;
}

export type BudgetKind = keyof RateBudgets;

const perSecond = (fallback: number) => z.coerce.number().positive().default(fallback);
const burst = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/**
 * The budgets' settings, production values by default. Tests through the ingress run with
 * these; only component tests pass smaller ones in code.
 */
export const rateBudgetsEnv = {
  RATE_LIMIT_READ_REFILL_PER_SECOND: perSecond(100),
  RATE_LIMIT_READ_BURST: burst(200),
  RATE_LIMIT_WRITE_REFILL_PER_SECOND: perSecond(100),
  RATE_LIMIT_WRITE_BURST: burst(1_000),
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
