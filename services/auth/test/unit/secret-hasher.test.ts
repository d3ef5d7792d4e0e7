import { describe, expect, it } from '@jest/globals';
import { boundedHasher, type SecretHasher } from '../../src/domain/secret-hasher.js';

/** A hasher whose verifications finish when the test says so, counting how many run at once. */
function gatedHasher() {
  const gates: (() => void)[] = [];
  const stats = { running: 0, most: 0 };
  const hasher: SecretHasher = {
    hash: () => Promise.resolve('h'),
    verify: async () => {
      stats.running += 1;
      stats.most = Math.max(stats.most, stats.running);
      await new Promise<void>((r) => gates.push(r));
      stats.running -= 1;
      return true;
    },
  };
  return { hasher, gates, stats };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('boundedHasher', () => {
  it('when more verifications arrive than the bound, then at most `concurrency` run, the queue waits, and beyond it 503', async () => {
    const { hasher, gates, stats } = gatedHasher();
    const bounded = boundedHasher(hasher, { concurrency: 2, queue: 3 });
    const admitted = Array.from({ length: 5 }, () => bounded.verify('h', 's'));
    await expect(bounded.verify('h', 's')).rejects.toMatchObject({
      status: 503,
      code: 'service_unavailable',
    });
    await tick();
    expect(stats.running).toBe(2);

    while (gates.length > 0 || stats.running > 0) {
      gates.shift()?.();
      await tick();
    }
    await expect(Promise.all(admitted)).resolves.toEqual(Array(5).fill(true));
    expect(stats.most).toBe(2);
  });
});
