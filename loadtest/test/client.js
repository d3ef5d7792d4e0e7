// Drives lib/http.js and lib/auth.js against the fake Herald of client.test.mjs: one logical
// request per misbehaviour the fake plays (see there). Not a load test.
import { adoptTokens, exchangeAll } from '../lib/auth.js';
import { send } from '../lib/http.js';

export { handleSummary } from '../lib/summary.js';

export const options = { vus: 1, iterations: 1 };

export function setup() {
  return { tokens: exchangeAll() };
}

export default function (data) {
  adoptTokens(data.tokens);
  const ctx = { runId: 'selftest', key: 0 };
  for (const route of [
    'rate-limited',
    'unauthorized-once',
    'unauthorized-always',
    'no-answer-once',
    'unavailable-once',
  ]) {
    send(ctx, {
      route,
      method: 'POST',
      path: `/test/${route}`,
      body: { dedupKey: `key-${route}`, at: 'fixed' },
      expect: [202],
    });
  }
}
