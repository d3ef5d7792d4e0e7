// Token exchange through the ingress, beside its floor measured in the same run: one argon2
// verify with the service's own parameters. The exchange is the API's most expensive call.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { closedLoop, fmt, stats } from './lib.mjs';

export const name = 'token-exchange';

async function adminPost(ingressUrl, adminToken, route, body) {
  const res = await fetch(`${ingressUrl}/admin/v1${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`admin ${route} answered ${res.status}`);
  return res.json();
}

export async function run({ ingressUrl, adminToken, repoRoot, seconds, concurrency }) {
  // The floor: argon2id verify with exactly the parameters the service hashes with.
  const { ARGON2_OPTIONS } = await import(
    pathToFileURL(path.join(repoRoot, 'services/auth/dist/domain/secret-hasher.js')).href
  );
  const { default: argon2 } = await import('argon2');
  const hash = await argon2.hash('sk_benchmark-secret', ARGON2_OPTIONS);
  const verifySamples = [];
  for (let i = 0; i < 40; i += 1) {
    const t0 = performance.now();
    await argon2.verify(hash, 'sk_benchmark-secret');
    verifySamples.push(performance.now() - t0);
  }
  const verify = stats(verifySamples);

  const tenant = await adminPost(ingressUrl, adminToken, '/tenants', { name: 'bench' });
  const key = await adminPost(ingressUrl, adminToken, `/tenants/${tenant.id}/api-keys`, {
    kind: 'secret',
    name: 'bench',
  });
  const basic = (id, secret) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  const exchangeWith = (authorization, expected) => async () => {
    const res = await fetch(`${ingressUrl}/v1/token`, {
      method: 'POST',
      headers: { authorization },
    });
    await res.arrayBuffer();
    return res.status === expected;
  };

  const single = await closedLoop({
    request: exchangeWith(basic(key.clientId, key.secret), 200),
    concurrency: 1,
    seconds: Math.max(2, seconds / 3),
  });
  const ok = await closedLoop({
    request: exchangeWith(basic(key.clientId, key.secret), 200),
    concurrency,
    seconds,
  });
  const wrongSecret = await closedLoop({
    request: exchangeWith(basic(key.clientId, 'sk_wrong'), 401),
    concurrency: 1,
    seconds: Math.max(2, seconds / 3),
  });
  const unknownClient = await closedLoop({
    request: exchangeWith(basic('ck_0000000000000000000000', 'sk_wrong'), 401),
    concurrency: 1,
    seconds: Math.max(2, seconds / 3),
  });

  const cores = os.availableParallelism?.() ?? os.cpus().length;
  const rows = [
    [
      'argon2id verify, in-process (baseline)',
      verify.count,
      1000 / verify.mean,
      verify.p50,
      verify.p99,
    ],
    ['exchange 200, 1 at a time', single.count, single.perSecond, single.p50, single.p99],
    [`exchange 200, ${concurrency} concurrent`, ok.count, ok.perSecond, ok.p50, ok.p99],
    [
      'exchange 401 wrong secret, 1 at a time',
      wrongSecret.count,
      wrongSecret.perSecond,
      wrongSecret.p50,
      wrongSecret.p99,
    ],
    [
      'exchange 401 unknown ClientID, 1 at a time',
      unknownClient.count,
      unknownClient.perSecond,
      unknownClient.p50,
      unknownClient.p99,
    ],
  ];
  console.log(
    `\n## ${name} (${cores} cores, argon2id m=${ARGON2_OPTIONS.memoryCost} t=${ARGON2_OPTIONS.timeCost} p=${ARGON2_OPTIONS.parallelism})`,
  );
  console.log('| measurement | samples | per second | p50 ms | p99 ms |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [label, n, rate, p50, p99] of rows) {
    console.log(`| ${label} | ${n} | ${fmt(rate)} | ${fmt(p50, 2)} | ${fmt(p99, 2)} |`);
  }
  const ceiling = (1000 / verify.mean) * cores;
  console.log(
    `single exchange p50 / verify p50 = ${fmt(single.p50 / verify.p50, 2)}x; ` +
      `throughput ${fmt(ok.perSecond)}/s = ${fmt((100 * ok.perSecond) / ceiling, 0)}% of the hash ceiling (${fmt(ceiling)}/s on ${cores} cores); ` +
      `unknown-ClientID p50 / wrong-secret p50 = ${fmt(unknownClient.p50 / wrongSecret.p50, 2)}x`,
  );
  if (single.unexpected + ok.unexpected + wrongSecret.unexpected + unknownClient.unexpected > 0) {
    throw new Error('some exchanges answered an unexpected status');
  }
  return { verify, single, ok, wrongSecret, unknownClient, ceiling };
}
