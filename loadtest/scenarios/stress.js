// Stress: beyond the busy hour, in steps, to find where Herald bends and to see that it bends
// gracefully. STEPS (4) steps of RATE (150) iterations/s each: ramp for STEP_RAMP (1m), hold for
// STEP_HOLD (2m), so 150, 300, 450, 600 iterations/s, then down over 1m. With the keys that suit
// the load test, the upper steps exceed the keys' budgets: the rate limiter answers 429, the
// clients wait Retry-After, and the 429s are counted, not failed. Passing means degrading, not
// breaking: at most 1 % failed requests per route, p95/p99 within 4x the SLO, and the test stops
// early when over 10 % of all requests fail.
import { envDuration, envNumber } from '../lib/config.js';
import { options as build, vus } from '../lib/options.js';
import { thresholds } from '../lib/thresholds.js';

export { default, handleSummary, setup } from '../lib/scenario.js';

const rate = envNumber('RATE', 150);
const steps = envNumber('STEPS', 4);

const stages = [];
for (let step = 1; step <= steps; step += 1) {
  stages.push({ duration: envDuration('STEP_RAMP', '1m'), target: step * rate });
  stages.push({ duration: envDuration('STEP_HOLD', '2m'), target: step * rate });
}
stages.push({ duration: envDuration('RAMP_DOWN', '1m'), target: 0 });

export const options = build(
  'stress',
  { executor: 'ramping-arrival-rate', startRate: 0, stages, ...vus(steps * rate) },
  thresholds({
    latencyFactor: 4,
    errorRate: 0.01,
    checkRate: 0.99,
    rateLimited: true,
    abortAbove: 0.1,
  }),
);
