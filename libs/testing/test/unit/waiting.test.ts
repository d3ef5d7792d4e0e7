import { describe, expect, it } from '@jest/globals';
import { pollUntil } from '../../src/index.js';

describe('pollUntil', () => {
  it('when the check turns true, then it resolves; a check that throws counts as not yet', async () => {
    let calls = 0;
    const check = () => {
      calls += 1;
      if (calls === 1) return Promise.reject(new Error('not reachable yet'));
      return Promise.resolve(calls >= 3);
    };
    await expect(pollUntil(check, { intervalMs: 1 })).resolves.toEqual(expect.any(Number));
    expect(calls).toBe(3);
  });

  it('when the check never turns true, then it rejects naming the condition', async () => {
    await expect(
      pollUntil(() => Promise.resolve(false), { timeoutMs: 20, intervalMs: 5, what: 'the sync' }),
    ).rejects.toThrow('the sync not met within 20 ms');
  });
});
