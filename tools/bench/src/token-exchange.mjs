// Token exchange through the ingress, beside its floor measured in the same run: one argon2
// verify with the service's own parameters. The exchange is the API's most expensive call.
import { randomInt } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { closedLoop, fmt, machineCores, stats } from './lib.mjs';

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

/**
 * POST /v1/token from a given loopback source address: the ingress passes it on as the client
 * address, so the failure paths can be measured without the guard on failed exchanges
 * stepping in, and the guard's own refusal can be measured on one address.
 */
function exchangeFrom(ingressUrl, localAddress, authorization) {
  const url = new URL('/v1/token', ingressUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname === 'localhost' ? '127.0.0.1' : url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress,
        headers: { authorization, 'content-length': '0' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const freshAddress = () => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

export async function run({ ingressUrl, adminToken, repoRoot, seconds, concurrency }) {
  const startedAt = new Date().toISOString();
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
  // Failures, each from a fresh address and spread over many keys, so the guard never refuses.
  const spare = [];
  for (let i = 0; i < 60; i += 1) {
    spare.push(
      await adminPost(ingressUrl, adminToken, `/tenants/${tenant.id}/api-keys`, { kind: 'secret' }),
    );
  }
  let turn = 0;
  const wrongSecret = await closedLoop({
    request: async () =>
      (await exchangeFrom(
        ingressUrl,
        freshAddress(),
        basic(spare[turn++ % spare.length].clientId, 'sk_wrong'),
      )) === 401,
    concurrency: 1,
    seconds: Math.max(2, seconds / 3),
  });
  const unknownClient = await closedLoop({
    request: async () =>
      (await exchangeFrom(
        ingressUrl,
        freshAddress(),
        basic(`ck_unknown${randomInt(1e12)}`, 'sk_wrong'),
      )) === 401,
    concurrency: 1,
    seconds: Math.max(2, seconds / 3),
  });
  // An attack from one address: after its 30 failures every attempt is refused before hashing.
  const attacker = freshAddress();
  for (let i = 0; i < 40; i += 1) {
    await exchangeFrom(ingressUrl, attacker, basic(`ck_attack${i}`, 'sk_wrong'));
  }
  const refused = await closedLoop({
    // The refill lets one attempt in every 2 s: that one is hashed and answers 401.
    request: async () =>
      [429, 401].includes(
        await exchangeFrom(ingressUrl, attacker, basic(`ck_attack${randomInt(1e9)}`, 'x')),
      ),
    concurrency,
    seconds: Math.max(2, seconds / 3),
    warmupSeconds: 0,
  });

  const cores = machineCores();
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
    [
      `exchange 429 refused by the guard (one address under attack), ${concurrency} concurrent`,
      refused.count,
      refused.perSecond,
      refused.p50,
      refused.p99,
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
      `unknown-ClientID p50 / wrong-secret p50 = ${fmt(unknownClient.p50 / wrongSecret.p50, 2)}x; ` +
      `a refused attempt costs ${fmt(refused.p50 / verify.p50, 2)}x a hash (p50)`,
  );
  const unexpected = [single, ok, wrongSecret, unknownClient, refused].reduce(
    (n, r) => n + r.unexpected,
    0,
  );
  if (unexpected > 0) {
    const which = { single, ok, wrongSecret, unknownClient, refused };
    const counts = Object.entries(which).map(([k, r]) => `${k}: ${r.unexpected}`);
    throw new Error(`some exchanges answered an unexpected status (${counts.join(', ')})`);
  }
  return {
    startedAt,
    cores,
    concurrency,
    seconds,
    measurements: rows.map(([label, samples, perSecond, p50, p99], i) => ({
      name: MEASUREMENT_NAMES[i],
      label: CHART_LABELS[i],
      description: label,
      // The in-process hash is what every exchange costs at least: the baseline, drawn as one,
      // and marked on each exchange's bar (all cores' worth for the concurrent ones).
      group: i === 0 ? 'floor' : 'exchange',
      samples,
      primary: {
        value: perSecond,
        unit: 'per s',
        ...(i > 0 && { floor: CONCURRENT[i] ? ceiling : 1000 / verify.mean, floorShare: 1 }),
      },
      p50,
      p99,
    })),
    verify,
    single,
    ok,
    wrongSecret,
    unknownClient,
    refused,
    ceiling,
  };
}

const CHART_LABELS = [
  'argon2id verify, in-process',
  'exchange 200, 1 at a time',
  'exchange 200, concurrent',
  '401 wrong secret',
  '401 unknown ClientID',
  '429 refused by the guard',
];
const CONCURRENT = [false, false, true, false, false, true];

const MEASUREMENT_NAMES = [
  'argon2-verify',
  'exchange-single',
  'exchange-concurrent',
  'wrong-secret',
  'unknown-client',
  'guard-refused',
];

/** The chart's input (chart.mjs) from this benchmark's results. */
export function chartData(s) {
  return {
    title: 'Herald token exchange benchmark',
    subtitle: `${s.startedAt}, ${s.cores} cores, ${s.concurrency} concurrent, ${s.seconds} s per measurement`,
    measurements: s.measurements,
    legend: {
      floor: 'baseline: one argon2id hash',
      floorShare: 'hashes a second (all cores when concurrent)',
    },
  };
}
