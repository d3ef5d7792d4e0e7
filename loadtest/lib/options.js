// The options every scenario shares; each scenario file supplies its executor and thresholds.
import { envDuration, envNumber } from './config.js';

/**
 * VUs for an arrival-rate executor whose busiest moment is `peakRate` iterations/s. k6 starts
 * iterations on time only while it has idle VUs: an iteration takes ~10-100 ms, longer when it
 * waits out a 429 or a slow answer, so a VU per iteration/s leaves room for 1 s iterations.
 * VUS and MAX_VUS override.
 */
export function vus(peakRate) {
  return {
    preAllocatedVUs: envNumber('VUS', Math.max(2, Math.ceil(peakRate / 5))),
    maxVUs: envNumber('MAX_VUS', Math.max(20, Math.ceil(peakRate))),
  };
}

export function options(name, scenario, thresholds) {
  return {
    scenarios: { [name]: { timeUnit: '1s', ...scenario } },
    thresholds,
    // Marks every metric of the run; the User-Agent marks its requests in access logs.
    tags: { loadtest: name },
    userAgent: 'herald-loadtest/1 (k6)',
    summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(95)', 'p(99)'],
    setupTimeout: '2m',
  };
}

/** Ramp from 0 to `rate` iterations/s over RAMP (2m), hold it for HOLD, ramp down over RAMP_DOWN
 *  (1m): the shape of the load and soak scenarios. */
export function plateau(rate, hold) {
  return {
    executor: 'ramping-arrival-rate',
    startRate: 0,
    stages: [
      { duration: envDuration('RAMP', '2m'), target: rate },
      { duration: envDuration('HOLD', hold), target: rate },
      { duration: envDuration('RAMP_DOWN', '1m'), target: 0 },
    ],
    ...vus(rate),
  };
}
