// Smoke: does every route answer correctly, end to end, with the real client behaviour? Steady,
// light traffic: RATE (10) iterations/s for DURATION (12 s) = 120 iterations, so the whole mix
// (100 iterations) and every route run at least once, on one key. It judges correctness, not
// speed: no failed request at all, every check passing, every route called, tokens refreshed,
// no 429; latency bounds are ten times the SLO, because `npm test` runs it on a busy laptop.
import { refreshTokensEarly } from '../lib/auth.js';
import { envDuration, envNumber } from '../lib/config.js';
import { options as build, vus } from '../lib/options.js';
import { thresholds } from '../lib/thresholds.js';

export { default, handleSummary, setup } from '../lib/scenario.js';

// Tokens last 900 s; refreshing them 894 s early makes every VU exchange again after 6 s, so the
// refresh path is proven here rather than first in a two-hour soak.
refreshTokensEarly(envNumber('TOKEN_REFRESH_MARGIN_S', 894));

const rate = envNumber('RATE', 10);

export const options = build(
  'smoke',
  {
    executor: 'constant-arrival-rate',
    rate,
    duration: envDuration('DURATION', '12s'),
    ...vus(rate),
  },
  {
    ...thresholds({ latencyFactor: 10, errorRate: 0, checkRate: 1, rateLimited: false }),
    herald_token_refreshes: ['count>0'],
  },
);
