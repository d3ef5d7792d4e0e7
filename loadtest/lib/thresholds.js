// Pass/fail criteria, per route, from the service level objectives (slos.generated.js, made by
// `npm run generate` from tools/observability/src/slos.mjs, the same definition the burn-rate
// alerts come from). The load and soak scenarios hold the objectives themselves; the others
// scale them (see each scenario and loadtest/README.md for the reasoning).
import { ROUTES } from './routes.js';
import { OBJECTIVES } from './slos.generated.js';

/** The objective a route is held to: its p99 (ms) and highest share of failed requests. */
export function objectiveOf(routeName) {
  const objective = OBJECTIVES.find((o) => o.routes.test(routeName));
  if (!objective) throw new Error(`the route ${routeName} has no service level objective`);
  return objective;
}

/**
 * @param latencyFactor  multiplies the objective's p99 (1 = the objective itself)
 * @param errorRate      highest share of failed requests per route (5xx, timeouts, unexpected
 *                       4xx); default the objective's
 * @param checkRate      lowest share of passing checks
 * @param rateLimited    true: 429s are part of the scenario; false: any 429 fails it
 * @param abortAbove     stop the whole test early when this share of all requests fails (a
 *                       target that is down gets no more load; judged after the first minute)
 */
export function thresholds({ latencyFactor, errorRate, checkRate, rateLimited, abortAbove }) {
  const t = { checks: [checkRate === 1 ? 'rate==1' : `rate>=${checkRate}`] };
  for (const route of ROUTES) {
    const objective = objectiveOf(route.name);
    const tag = `{name:${route.name}}`;
    // Any failed token exchange is a failure: the scripts exchange rarely and never wrongly.
    const failures = route.kind === 'token' ? 0 : (errorRate ?? objective.errorRate);
    t[`http_req_failed${tag}`] = [failures === 0 ? 'rate==0' : `rate<=${failures}`];
    t[`herald_req_duration${tag}`] = [`p(99)<${objective.p99Ms * latencyFactor}`];
    // Every route must have been exercised: a threshold on a route nobody called proves nothing.
    // (setup() always exchanges, so the token route needs no such proof.)
    if (route.kind !== 'token') t[`http_reqs${tag}`] = ['count>0'];
  }
  if (!rateLimited) t.herald_rate_limited = ['count==0'];
  if (abortAbove) {
    t.http_req_failed = [
      { threshold: `rate<${abortAbove}`, abortOnFail: true, delayAbortEval: '1m' },
    ];
  }
  return t;
}

/** The objectives themselves, held by the load and soak scenarios: each route's p99 and share of
 *  failed requests, 99.9 % of checks, no 429 (their keys stay under the budgets). */
export const AT_SLO = {
  latencyFactor: 1,
  errorRate: undefined,
  checkRate: 0.999,
  rateLimited: false,
  abortAbove: 0.1,
};
