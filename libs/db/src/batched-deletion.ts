/**
 * One kind of row to delete, a batch at a time: `deleteBatch` deletes at most `batchSize` rows in
 * one statement (its own transaction) and resolves how many it deleted.
 */
export interface DeletionStep {
  name: string;
  batchSize: number;
  deleteBatch(batchSize: number): Promise<number>;
}

export interface BatchedDeletionOptions {
  /**
   * How long one call may go on: once it has run out, the call answers after the next full batch
   * (a step with more to delete). So every call deletes something unless nothing is left.
   */
  timeBudgetMs: number;
  /** The clock; tests pass their own. Default `performance.now`. */
  now?: () => number;
}

export interface BatchedDeletionResult {
  /** Every step found fewer rows than a batch: nothing is left. */
  done: boolean;
  deletedRows: number;
}

/**
 * Runs the steps in order, each batch after batch until one deletes fewer rows than its size,
 * for about `timeBudgetMs`. Small transactions keep row locks few and short and leave the other
 * rows of the tables (other Tenants') to their writers; the budget keeps one call short, so its
 * caller calls again while `done` is false. Idempotent: a step with nothing left costs one empty
 * batch, so the next call starts again from the first step and still gets on.
 */
export async function runBatchedDeletion(
  steps: readonly DeletionStep[],
  options: BatchedDeletionOptions,
): Promise<BatchedDeletionResult> {
  const now = options.now ?? (() => performance.now());
  const deadline = now() + options.timeBudgetMs;
  let deletedRows = 0;
  for (const step of steps) {
    for (;;) {
      const deleted = await step.deleteBatch(step.batchSize);
      deletedRows += deleted;
      if (deleted < step.batchSize) break;
      if (now() >= deadline) return { done: false, deletedRows };
    }
  }
  return { done: true, deletedRows };
}
