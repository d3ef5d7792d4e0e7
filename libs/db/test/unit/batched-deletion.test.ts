import { describe, expect, it } from '@jest/globals';
import { runBatchedDeletion, type DeletionStep } from '../../src/index.js';

/** A step over `rows` rows that records each batch it ran; `tick` advances a test clock. */
function step(
  name: string,
  rows: number,
  batchSize: number,
  calls: string[],
  tick: () => void = () => {},
): DeletionStep {
  let left = rows;
  return {
    name,
    batchSize,
    deleteBatch: (size) => {
      tick();
      const deleted = Math.min(size, left);
      left -= deleted;
      calls.push(`${name}:${deleted}`);
      return Promise.resolve(deleted);
    },
  };
}

describe('runBatchedDeletion', () => {
  it('when the budget is ample, then every step runs batch after batch until a short one, in order', async () => {
    const calls: string[] = [];
    const result = await runBatchedDeletion(
      [step('a', 5, 2, calls), step('b', 0, 2, calls), step('c', 4, 2, calls)],
      { timeBudgetMs: 60_000 },
    );
    expect(result).toEqual({ done: true, deletedRows: 9 });
    expect(calls).toEqual(['a:2', 'a:2', 'a:1', 'b:0', 'c:2', 'c:2', 'c:0']);
  });

  it('when nothing is left, then one empty batch per step and done (deleting nothing is a success)', async () => {
    const calls: string[] = [];
    const result = await runBatchedDeletion([step('a', 0, 10, calls), step('b', 0, 10, calls)], {
      timeBudgetMs: 0,
    });
    expect(result).toEqual({ done: true, deletedRows: 0 });
    expect(calls).toEqual(['a:0', 'b:0']);
  });

  it('when the budget runs out, then the call answers after the full batch under way and says more is left', async () => {
    const calls: string[] = [];
    let clock = 0;
    const result = await runBatchedDeletion([step('a', 100, 10, calls, () => (clock += 40))], {
      timeBudgetMs: 100,
      now: () => clock,
    });
    expect(result).toEqual({ done: false, deletedRows: 30 });
    expect(calls).toEqual(['a:10', 'a:10', 'a:10']);
  });

  it('when calls with no budget are repeated, then each gets past the finished steps and deletes a batch, until done', async () => {
    const calls: string[] = [];
    const steps = [step('a', 3, 2, calls), step('b', 3, 2, calls)];
    const results = [];
    for (let i = 0; i < 5; i += 1) {
      const result = await runBatchedDeletion(steps, { timeBudgetMs: 0 });
      results.push(result);
      if (result.done) break;
    }
    expect(results).toEqual([
      { done: false, deletedRows: 2 },
      { done: false, deletedRows: 3 },
      { done: true, deletedRows: 1 },
    ]);
    expect(calls).toEqual(['a:2', 'a:1', 'b:2', 'a:0', 'b:1']);
  });
});
