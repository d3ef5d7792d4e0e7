// The load-test client's manners (token refresh and retries, docs/api-reference.md), checked against a fake Herald that misbehaves on
// purpose: k6 runs test/client.js through the real lib/http.js and lib/auth.js, and this file
// asserts what the fake saw. Needs k6 (built by tools/stack/src/go-tools.mjs, or K6_BINARY); no stack.
// Run: node --test loadtest/test/
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLIENT_ID = 'ck_selftest';
const CLIENT_SECRET = 'sk_selftest';

async function k6Binary() {
  if (process.env.K6_BINARY) return process.env.K6_BINARY;
  const { ensureGoTool } = await import('@herald/stack/go-tools.mjs');
  return ensureGoTool('k6');
}

/** The fake: a token route, and one route per misbehaviour. Everything it sees is logged. */
function fakeHerald() {
  // `seq` orders everything the fake saw: three round trips on loopback can share one
  // millisecond of `at`, so "between" is judged by it.
  let seq = 0;
  const exchanges = []; // {seq, at, token}
  const requests = []; // {route, attempt, seq, at, token, body, requestId, contentType}
  const reply = (res, status, headers = {}, body = { accepted: 1 }) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const at = Date.now();
      seq += 1;
      if (req.url === '/v1/token') {
        const expected = Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64');
        if (req.headers.authorization !== `Basic ${expected}`) {
          return reply(res, 401, {}, { code: 'invalid_client' });
        }
        const token = `t${exchanges.length + 1}`;
        exchanges.push({ seq, at, token });
        // The first token expires in 61 s: with the 60 s margin the client must exchange again
        // about a second later, before its next request.
        const expiresIn = exchanges.length === 1 ? 61 : 900;
        return reply(res, 200, {}, { accessToken: token, tokenType: 'Bearer', expiresIn });
      }
      const route = req.url.replace('/test/', '');
      const attempt = requests.filter((r) => r.route === route).length + 1;
      const token = req.headers.authorization?.replace('Bearer ', '');
      requests.push({
        route,
        attempt,
        seq,
        at,
        token,
        body,
        requestId: req.headers['x-request-id'],
        contentType: req.headers['content-type'],
      });
      const first = attempt === 1;
      switch (route) {
        case 'rate-limited':
          return first
            ? reply(res, 429, { 'retry-after': '1' }, { code: 'rate_limited' })
            : reply(res, 202);
        case 'unauthorized-once':
          return first ? reply(res, 401, {}, { code: 'unauthenticated' }) : reply(res, 202);
        case 'unauthorized-always':
          return reply(res, 401, {}, { code: 'unauthenticated' });
        case 'no-answer-once':
          if (first) return setTimeout(() => reply(res, 202), 12_000); // past REQUEST_TIMEOUT (5s)
          return reply(res, 202);
        case 'unavailable-once':
          return first
            ? reply(res, 503, { 'retry-after': '1' }, { code: 'service_unavailable' })
            : reply(res, 202);
        default:
          return reply(res, 404, {}, { code: 'not_found' });
      }
    });
  });
  return { server, exchanges, requests };
}

/** A client that loops (on 401s, say) must fail the test, not hang it. */
const K6_DEADLINE_MS = 60_000;

function runK6(binary, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      binary,
      ['run', '--no-usage-report', '--quiet', path.join(here, 'client.js')],
      {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), K6_DEADLINE_MS);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: signal ? `killed after ${K6_DEADLINE_MS} ms` : code, output });
    });
  });
}

test('when Herald misbehaves, then the client waits, refreshes and resends as a client should', async () => {
  const binary = await k6Binary();
  const fake = fakeHerald();
  await new Promise((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-loadtest-'));
  const summaryFile = path.join(dir, 'summary.json');
  try {
    const { code, output } = await runK6(binary, {
      BASE_URL: `http://127.0.0.1:${fake.server.address().port}`,
      CLIENT_ID,
      CLIENT_SECRET,
      // Long enough that a busy machine never times out an answer the fake gives at once.
      REQUEST_TIMEOUT: '5s',
      TOKEN_REFRESH_MARGIN_S: '60',
      TOKEN_REFRESH_JITTER_S: '0',
      MAX_RESENDS: '2',
      SUMMARY_JSON: summaryFile,
      K6_NO_USAGE_REPORT: 'true',
      K6_AUTO_EXTENSION_RESOLUTION: 'false',
    });
    assert.equal(code, 0, output);
    const seen = (route) => fake.requests.filter((r) => r.route === route);
    const exchangesBetween = (a, b) => fake.exchanges.filter((e) => e.seq > a.seq && e.seq < b.seq);

    for (const r of fake.requests) {
      assert.match(r.requestId, /^selftest-\d+-\d+$/);
      assert.equal(r.contentType, 'application/json');
    }

    // 429: waits Retry-After, then the same request again; the token of the first answer
    // (61 s) is within a minute of expiry by then, so the client exchanged before resending.
    const [limited, afterLimit] = seen('rate-limited');
    assert.equal(seen('rate-limited').length, 2);
    assert.equal(afterLimit.body, limited.body);
    assert.ok(afterLimit.at - limited.at >= 1000, `waited ${afterLimit.at - limited.at} ms`);
    assert.equal(limited.token, 't1');
    assert.equal(afterLimit.token, 't2');

    // 401: one exchange, then the same request with the new token.
    const [denied, retried] = seen('unauthorized-once');
    assert.equal(seen('unauthorized-once').length, 2);
    assert.equal(exchangesBetween(denied, retried).length, 1);
    assert.notEqual(retried.token, denied.token);
    assert.equal(retried.body, denied.body);

    // A second 401 ends it: two requests, one exchange between them.
    const always = seen('unauthorized-always');
    assert.equal(always.length, 2);
    assert.equal(exchangesBetween(always[0], always[1]).length, 1);

    // No answer in time, and a 503: the same body again (same dedupKey).
    for (const route of ['no-answer-once', 'unavailable-once']) {
      const [first, second] = seen(route);
      assert.equal(seen(route).length, 2, route);
      assert.equal(second.body, first.body, route);
      assert.ok(second.at - first.at >= 1000, `${route}: resent after ${second.at - first.at} ms`);
    }

    // The metrics: the 429 is counted apart and is not a failed request; the two 401s of
    // unauthorized-always, the first 401, the timeout and the 503 are.
    const { metrics, root_group: root } = JSON.parse(fs.readFileSync(summaryFile, 'utf8'));
    assert.equal(metrics.herald_rate_limited.values.count, 1);
    assert.equal(metrics.herald_resends.values.count, 2);
    assert.equal(metrics.herald_token_refreshes.values.count, 3); // expiry, 401, 401
    assert.equal(metrics.http_req_failed.values.passes, 5);
    const failedChecks = root.checks.filter((c) => c.fails > 0).map((c) => c.name);
    assert.deepEqual(failedChecks, ['unauthorized-always: 202']);
  } finally {
    fake.server.closeAllConnections();
    fake.server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
