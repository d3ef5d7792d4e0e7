// Load: the expected busy hour, held long enough to judge the SLO. Ramp from 0 to RATE (150)
// iterations/s over RAMP (2m), hold HOLD (10m), ramp down over RAMP_DOWN (1m). 150 iterations/s
// is about 165 requests/s and 750 Events/s with the mix in lib/mix.js. Thresholds are the SLO
// itself (AT_SLO in lib/thresholds.js); no 429 is allowed, so the traffic must be spread over
// enough keys to stay under their budgets (see loadtest/README.md).
import { envNumber } from '../lib/config.js';
import { options as build, plateau } from '../lib/options.js';
import { AT_SLO, thresholds } from '../lib/thresholds.js';

export { default, handleSummary, setup } from '../lib/scenario.js';

export const options = build('load', plateau(envNumber('RATE', 150), '10m'), thresholds(AT_SLO));
