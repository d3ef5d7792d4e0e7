// Soak: a long, steady, ordinary day, for what only time shows: memory or connection leaks, a
// growing outbox or dedup table, token refresh (every VU exchanges again every 14 minutes), the
// 60 s dedup window sliding. RATE (120, 80 % of the load test) iterations/s after RAMP (2m), for
// HOLD (2h), then down over RAMP_DOWN (1m). The same thresholds as the load test: the SLO must
// hold for the whole run, not only for its first ten minutes.
import { envNumber } from '../lib/config.js';
import { options as build, plateau } from '../lib/options.js';
import { AT_SLO, thresholds } from '../lib/thresholds.js';

export { default, handleSummary, setup } from '../lib/scenario.js';

export const options = build('soak', plateau(envNumber('RATE', 120), '2h'), thresholds(AT_SLO));
