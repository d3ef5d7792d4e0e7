// Spike: a sudden surge (a campaign goes out, a customer's backfill starts) and the recovery after
// it. RATE (75) iterations/s for BASELINE (1m), up to SPIKE_RATE (600) within SPIKE_RAMP (10s),
// held SPIKE_HOLD (1m), back to RATE within SPIKE_RAMP and held RECOVERY (2m) to see latency
// return. The surge exceeds the keys' write budgets, so 429s are expected and counted, not
// failed. Passing: at most 1 % failed requests per route and p95/p99 within 5x the SLO over the
// whole run; the test stops early when over 10 % of all requests fail.
import { envDuration, envNumber } from '../lib/config.js';
import { options as build, vus } from '../lib/options.js';
import { thresholds } from '../lib/thresholds.js';

export { default, handleSummary, setup } from '../lib/scenario.js';

const rate = envNumber('RATE', 75);
const spikeRate = envNumber('SPIKE_RATE', 600);
const spikeRamp = envDuration('SPIKE_RAMP', '10s');

export const options = build(
  'spike',
  {
    executor: 'ramping-arrival-rate',
    startRate: rate,
    stages: [
      { duration: envDuration('BASELINE', '1m'), target: rate },
      { duration: spikeRamp, target: spikeRate },
      { duration: envDuration('SPIKE_HOLD', '1m'), target: spikeRate },
      { duration: spikeRamp, target: rate },
      { duration: envDuration('RECOVERY', '2m'), target: rate },
    ],
    ...vus(spikeRate),
  },
  thresholds({
    latencyFactor: 5,
    errorRate: 0.01,
    checkRate: 0.99,
    rateLimited: true,
    abortAbove: 0.1,
  }),
);
