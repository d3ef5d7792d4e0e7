// One logical API call, sent the way a client should send it: with a fresh token; after a
// 429 again once Retry-After has passed; after a 401 once more with a new token; after a timeout,
// a lost connection or a 5xx up to MAX_RESENDS times with backoff. Every resend carries the same
// body, so Events keep their dedupKeys.
import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';
import { bearer, refresh } from './auth.js';
import { baseUrl, maxRateLimitWaitS, maxResends, requestTimeout } from './config.js';
import { duration, rateLimited, resends } from './metrics.js';
import { retryAfterSeconds } from './response.js';

// Statuses a route is meant to answer, plus 429, are "expected" for k6's http_req_failed; one
// callback per distinct set, made once (they are Go objects, not plain functions).
const callbacks = {};
function expectedStatuses(expect) {
  const id = expect.join(',');
  callbacks[id] ??= http.expectedStatuses(...expect, 429);
  return callbacks[id];
}

let sequence = 0;

/**
 * Sends `method path` with `body` (JSON) for `ctx.key`, tagged `name: route`; `expect` lists the
 * statuses that are right here. Returns the final response after the check on its status.
 */
export function send(ctx, { route, method, path, body, expect }) {
  const payload = body === undefined ? null : JSON.stringify(body);
  const tags = { name: route };
  const startedAt = Date.now();
  let resent = 0;
  let reauthenticated = false;
  for (;;) {
    sequence += 1;
    const res = http.request(method, `${baseUrl}${path}`, payload, {
      headers: {
        Authorization: `Bearer ${bearer(ctx.key)}`,
        ...(payload === null ? {} : { 'Content-Type': 'application/json' }),
        // Finds a request of this run in the services' logs: run, VU, request.
        'X-Request-Id': `${ctx.runId}-${exec.vu.idInTest}-${sequence}`,
      },
      tags,
      timeout: requestTimeout,
      responseCallback: expectedStatuses(expect),
    });

    if (res.status === 429) {
      rateLimited.add(1, tags);
      check(res, { 'a 429 carries Retry-After': (r) => Boolean(r.headers['Retry-After']) });
      // A little jitter, so VUs told the same Retry-After do not all come back in one burst.
      const wait = retryAfterSeconds(res, 1) + Math.random() * 0.25;
      if ((Date.now() - startedAt) / 1000 + wait > maxRateLimitWaitS)
        return finish(res, route, expect);
      sleep(wait);
      continue;
    }
    duration.add(res.timings.duration, tags);

    if (res.status === 401 && !reauthenticated && !expect.includes(401)) {
      reauthenticated = true;
      refresh(ctx.key, '401');
      continue;
    }
    if ((res.status === 0 || res.status >= 500) && resent < maxResends) {
      resent += 1;
      resends.add(1, { ...tags, reason: res.status === 0 ? 'no_response' : String(res.status) });
      sleep(retryAfterSeconds(res, resent));
      continue;
    }
    return finish(res, route, expect);
  }
}

function finish(res, route, expect) {
  check(res, { [`${route}: ${expect.join(' or ')}`]: (r) => expect.includes(r.status) });
  return res;
}
