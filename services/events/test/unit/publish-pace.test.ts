// Recording's pace against publishing: the gap the pace asks for (doubling while the oldest
// unpublished message is older than the limit, halving once it is not, never slowing recording
// for a lag it could not read). The lag as read from a real outbox: component/publish-lag.test.ts.
import { describe, expect, it } from '@jest/globals';
import { createPublishPace, nextGap } from '../../src/recording/publish-pace.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('nextGap', () => {
  it('when the lag stays over the limit, then the gap doubles from 1 ms up to the largest', () => {
    const gaps: number[] = [];
    let gap = 0;
    for (let i = 0; i < 7; i += 1) gaps.push((gap = nextGap(gap, 501, 500, 20)));
    expect(gaps).toEqual([1, 2, 4, 8, 16, 20, 20]);
  });

  it('when the lag is at or under the limit, then the gap halves down to 0', () => {
    const gaps: number[] = [];
    let gap = 20;
    for (let i = 0; i < 7; i += 1) gaps.push((gap = nextGap(gap, 500, 500, 20)));
    expect(gaps).toEqual([10, 5, 2.5, 1.25, 0.625, 0, 0]);
  });
});

describe('createPublishPace', () => {
  it('when the lag read goes over the limit and back, then the gap grows and decays with it', async () => {
    let lag = 0;
    const pace = createPublishPace({
      lagMs: () => Promise.resolve(lag),
      limitMs: 100,
      maxGapMs: 8,
      intervalMs: 5,
    });
    try {
      await sleep(30);
      expect(pace.gapMs()).toBe(0);
      lag = 1_000;
      await sleep(100);
      expect(pace.gapMs()).toBe(8);
      lag = 0;
      await sleep(100);
      expect(pace.gapMs()).toBe(0);
    } finally {
      pace.stop();
    }
  });

  it('when the lag cannot be read, then the gap decays as when caught up and each failure is reported', async () => {
    let failing = false;
    const errors: unknown[] = [];
    const pace = createPublishPace({
      lagMs: () => (failing ? Promise.reject(new Error('database away')) : Promise.resolve(1e6)),
      limitMs: 100,
      maxGapMs: 8,
      intervalMs: 5,
      onError: (err) => errors.push(err),
    });
    try {
      await sleep(100);
      expect(pace.gapMs()).toBe(8);
      failing = true;
      await sleep(100);
      expect(pace.gapMs()).toBe(0);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      pace.stop();
    }
  });
});
