// Generated from tools/observability/src/slos.mjs by `npm run generate`: do not edit.
// Each objective: the load test's route names it covers, its p99 (ms), its highest share of
// failed requests.
export const OBJECTIVES = [
  { slo: 'events', routes: /^events\./, p99Ms: 1000, errorRate: 0.001 },
  { slo: 'token-exchange', routes: /^token$/, p99Ms: 1000, errorRate: 0.001 },
  { slo: 'contact-reads', routes: /^contacts\.get/, p99Ms: 500, errorRate: 0.001 },
  { slo: 'contact-writes', routes: /^contacts\.upsert/, p99Ms: 1000, errorRate: 0.001 },
];
