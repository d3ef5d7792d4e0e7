// Pass/fail criteria, per route. The latency SLO below is the one the load and soak scenarios
// hold; the others scale it (see each scenario and loadtest/README.md for the reasoning).
import { ROUTES } from './routes.js';

/**
 * p95/p99 in milliseconds for an answer at the load scenario's rate, by kind of route. Reads are
 * one indexed lookup; writes add a transaction (and for Events an identity resolution through
 * the contacts service); an array carries up to BATCH_MAX (100) Events in one transaction; the
 * token exchange checks the secret against a deliberately slow hash (argon2id, 19 MiB).
 */
export const SLO_MS = {
  read: { p95: 150, p99: 400 },
  write: { p95: 300, p99: 800 },
  batch: { p95: 1000, p99: 2500 },
  token: { p95: 500, p99: 1000 },
};

/**
 * @param latencyFactor  multiplies SLO_MS (1 = the SLO itself)
 * @param errorRate      highest share of failed requests per route (5xx, timeouts, unexpected 4xx)
 * @param checkRate      lowest share of passing checks
 * @param rateLimited    true: 429s are part of the scenario; false: any 429 fails it
 * @param abortAbove     stop the whole test early when this share of all requests fails (a
 *                       target that is down gets no more load; judged after the first minute)
 */
export function thresholds({ latencyFactor, errorRate, checkRate, rateLimited, abortAbove }) {
  const t = { checks: [checkRate === 1 ? 'rate==1' : `rate>=${checkRate}`] };
  for (const route of ROUTES) {
    const slo = SLO_MS[route.kind];
    const tag = `{name:${route.name}}`;
    // Any failed token exchange is a failure: the scripts exchange rarely and never wrongly.
    const failures = route.kind === 'token' ? 0 : errorRate;
    t[`http_req_failed${tag}`] = [failures === 0 ? 'rate==0' : `rate<=${failures}`];
    t[`herald_req_duration${tag}`] = [
      `p(95)<${slo.p95 * latencyFactor}`,
      `p(99)<${slo.p99 * latencyFactor}`,
    ];
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

/** The SLO itself, held by the load and soak scenarios: SLO_MS per route, at most 0.1 % failed
 *  requests per route (99.9 %), 99.9 % of checks, no 429 (their keys stay under the budgets). */
export const AT_SLO = {
  latencyFactor: 1,
  errorRate: 0.001,
  checkRate: 0.999,
  rateLimited: false,
  abortAbove: 0.1,
};
