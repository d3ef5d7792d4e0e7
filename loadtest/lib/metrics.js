// Herald's own metrics beside k6's built-in ones. All are tagged with the route `name`.
import { Counter, Trend } from 'k6/metrics';

/** Duration of every answer except 429s: the rate limiter answers those at once, and letting
 *  them into the latency figures would make an overloaded key look fast. Thresholds on latency
 *  use this, not http_req_duration. */
export const duration = new Trend('herald_req_duration', true);

/** 429 answers. Not errors: the client waits Retry-After and sends the same request again. */
export const rateLimited = new Counter('herald_rate_limited');

/** Requests sent again after a timeout, a lost connection or a 5xx (tag `reason`). */
export const resends = new Counter('herald_resends');

/** Token exchanges after setup() (tag `reason`: expiry or 401). */
export const tokenRefreshes = new Counter('herald_token_refreshes');
