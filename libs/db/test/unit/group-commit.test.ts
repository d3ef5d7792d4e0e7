// Group commit's own rules, with the batch write given as a function: which requests share a
// batch, and what each request gets when a batch fails as a whole. What a batch writes in
// PostgreSQL is tested by the services that use it, against the real database.
import { describe, expect, it } from '@jest/globals';
import { BatchHold, createGroupCommit, type BatchWrite } from '../../src/index.js';

type Write = (requests: readonly string[], batch: BatchWrite) => Promise<readonly string[]>;

/** As node-postgres reports a server's error (with a severity), or a client-side one without. */
const failure = (code?: string) =>
  Object.assign(new Error(`failed ${code ?? ''}`), code ? { code, severity: 'ERROR' } : {});

/** A group commit over `write`, holding its first requests until all are queued. */
function held(write: Write, options: { maxWeight?: number; weight?: (r: string) => number } = {}) {
  const calls: Array<{ requests: string[]; alone: boolean }> = [];
  const hold = new BatchHold();
  hold.hold();
  const batches = createGroupCommit<string, string>({
    maxWeight: options.maxWeight ?? 1_000,
    maxWaitMs: 5,
    hold,
    ...(options.weight ? { weight: options.weight } : {}),
    write: (requests, batch) => {
      calls.push({ requests: [...requests], alone: batch.alone });
      return write(requests, batch);
    },
  });
  return { batches, calls, hold };
}

const answerEach: Write = async (requests) => requests.map((r) => `ok ${r}`);

describe('createGroupCommit', () => {
  it('when requests arrive together, then one write takes them all and each gets its own answer', async () => {
    const { batches, calls, hold } = held(answerEach);
    const answers = ['a', 'b', 'c'].map((r) => batches.submit(r));
    hold.release();
    await expect(Promise.all(answers)).resolves.toEqual(['ok a', 'ok b', 'ok c']);
    expect(calls).toEqual([{ requests: ['a', 'b', 'c'], alone: false }]);
  });

  it('when the queue weighs more than a batch may, then it goes as several, a heavy request alone', async () => {
    const { batches, calls, hold } = held(answerEach, {
      maxWeight: 10,
      weight: (r) => Number(r.slice(1)),
    });
    const answers = ['w4', 'w5', 'w3', 'w20', 'w1'].map((r) => batches.submit(r));
    hold.release();
    await Promise.all(answers);
    expect(calls.map((c) => c.requests)).toEqual([['w4', 'w5'], ['w3'], ['w20'], ['w1']]);
  });

  it('when more than 64 requests wait, then no batch holds more than 64', async () => {
    const { batches, calls, hold } = held(answerEach);
    const answers = Array.from({ length: 130 }, (_, i) => batches.submit(`r${i}`));
    hold.release();
    await Promise.all(answers);
    expect(calls.map((c) => c.requests.length)).toEqual([64, 64, 2]);
  });

  it('when a batch deadlocks three times, then each request runs alone and only the guilty one fails', async () => {
    const { batches, calls, hold } = held(async (requests) => {
      if (requests.length > 1 || requests[0] === 'bad') throw failure('40P01');
      return [`ok ${requests[0]}`];
    });
    const answers = ['a', 'bad', 'c'].map((r) => batches.submit(r));
    hold.release();
    const settled = await Promise.allSettled(answers);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ code: '40P01' });
    // Three attempts of the batch, then each alone (the guilty one three times too).
    expect(calls.filter((c) => c.requests.length === 3)).toHaveLength(3);
    expect(calls.filter((c) => c.requests[0] === 'bad' && c.requests.length === 1)).toHaveLength(3);
  });

  it('when the server refuses a batch for another reason, then each request alone finds its own answer', async () => {
    const { batches, calls, hold } = held(async (requests) => {
      if (requests.includes('bad')) throw failure('22P02');
      return requests.map((r) => `ok ${r}`);
    });
    const answers = ['a', 'bad'].map((r) => batches.submit(r));
    hold.release();
    const settled = await Promise.allSettled(answers);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: 'ok a' });
    expect(settled[1]).toMatchObject({ status: 'rejected', reason: { code: '22P02' } });
    expect(calls.map((c) => c.requests)).toEqual([['a', 'bad'], ['a'], ['bad']]);
  });

  it('when the statement times out or the connection is lost, then every request fails without a retry', async () => {
    const lost = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    for (const err of [failure('57014'), failure(), lost]) {
      const { batches, calls, hold } = held(async () => {
        throw err;
      });
      const answers = ['a', 'b'].map((r) => batches.submit(r));
      hold.release();
      const settled = await Promise.allSettled(answers);
      expect(settled).toEqual([
        { status: 'rejected', reason: err },
        { status: 'rejected', reason: err },
      ]);
      expect(calls).toHaveLength(1);
    }
  });

  it('when a request runs alone, then it is written by itself with `alone` set, even while held', async () => {
    const { batches, calls } = held(answerEach);
    await expect(batches.alone('x')).resolves.toBe('ok x');
    expect(calls).toEqual([{ requests: ['x'], alone: true }]);
  });
});
