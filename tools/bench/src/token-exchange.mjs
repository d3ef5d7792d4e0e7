// Token exchange through the ingress, beside its floor measured in the same run: one argon2
// verify with the service's own parameters. The exchange is the API's most expensive call.
import { randomInt } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { closedLoop, fmt, machineCores, stats } from './lib.mjs';

export const name = 'token-exchange';

/** @typedef {Awaited<ReturnType<typeof closedLoop>>} Loop */
/** @typedef {(route: string, body: object) => Promise<Record<string, string>>} AdminPost */

/**
 * The operator API's JSON answer to a POST, which must be 2xx.
 * @param {string} ingressUrl
 * @param {string} adminToken
 * @param {string} route
 * @param {object} body
 * @returns {Promise<Record<string, string>>} the created Tenant or key
 */
async function adminPost(ingressUrl, adminToken, route, body) {
  const res = await fetch(`${ingressUrl}/admin/v1${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`admin ${route} answered ${res.status}`);
  return /** @type {Promise<Record<string, string>>} */ (res.json());
}

/**
 * POST /v1/token from a given loopback source address: the ingress passes it on as the client
 * address, so the failure paths can be measured without the guard on failed exchanges
 * stepping in, and the guard's own refusal can be measured on one address.
 * @param {string} ingressUrl
 * @param {string} localAddress
 * @param {string} authorization
 * @returns {Promise<number | undefined>} the answer's status
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

/**
 * @param {string} id
 * @param {string} secret
 */
const basic = (id, secret) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/** @param {import('./lib.mjs').RunOptions} options */
export async function run({ ingressUrl, adminToken, repoRoot, seconds, concurrency }) {
  const startedAt = new Date().toISOString();
  const { options, verify } = await hashFloor(repoRoot);
  /** @type {AdminPost} */
  const admin = (route, body) => adminPost(ingressUrl, adminToken, route, body);
  const tenant = await admin('/tenants', { name: 'bench' });
  const key = await admin(`/tenants/${tenant.id}/api-keys`, { kind: 'secret', name: 'bench' });
  // The measurements one at a time: long enough for a stable p50, a third of the others.
  const short = Math.max(2, seconds / 3);
  const authorization = basic(key.clientId, key.secret);
  const { single, ok } = await successes(ingressUrl, authorization, seconds, short, concurrency);
  const { wrongSecret, unknownClient } = await failures(ingressUrl, admin, tenant.id, short);
  const refused = await guardRefusals(ingressUrl, short, concurrency);
  const exchanges = { single, ok, wrongSecret, unknownClient, refused };

  const cores = machineCores();
  const rows = tableRows(verify, exchanges, concurrency);
  const ceiling = (1000 / verify.mean) * cores;
  console.log(
    `\n## ${name} (${cores} cores, argon2id m=${options.memoryCost} t=${options.timeCost} p=${options.parallelism})`,
  );
  console.log('| measurement | samples | per second | p50 ms | p99 ms |');
  console.log('|---|---:|---:|---:|---:|');
  for (const { label, samples, perSecond, p50, p99 } of rows) {
    console.log(`| ${label} | ${samples} | ${fmt(perSecond)} | ${fmt(p50, 2)} | ${fmt(p99, 2)} |`);
  }
  console.log(
    `single exchange p50 / verify p50 = ${fmt(single.p50 / verify.p50, 2)}x; ` +
      `throughput ${fmt(ok.perSecond)}/s = ${fmt((100 * ok.perSecond) / ceiling, 0)}% of the hash ceiling (${fmt(ceiling)}/s on ${cores} cores); ` +
      `unknown-ClientID p50 / wrong-secret p50 = ${fmt(unknownClient.p50 / wrongSecret.p50, 2)}x; ` +
      `a refused attempt costs ${fmt(refused.p50 / verify.p50, 2)}x a hash (p50)`,
  );
  expectedAnswers(exchanges);
  return {
    startedAt,
    cores,
    concurrency,
    seconds,
    measurements: measurements(rows, verify, ceiling),
    verify,
    ...exchanges,
    ceiling,
  };
}

/**
 * The floor: argon2id verify with exactly the parameters the service hashes with, 40 times.
 * @param {string} repoRoot
 */
async function hashFloor(repoRoot) {
  /** @type {{ ARGON2_OPTIONS: import('argon2').HashOptions }} the service's (no raw bytes) */
  const { ARGON2_OPTIONS } = await import(
    pathToFileURL(path.join(repoRoot, 'services/auth/dist/domain/secret-hasher.js')).href
  );
  const { default: argon2 } = await import('argon2');
  const hash = await argon2.hash('sk_benchmark-secret', ARGON2_OPTIONS);
  /** @type {number[]} */
  const verifySamples = [];
  for (let i = 0; i < 40; i += 1) {
    const t0 = performance.now();
    await argon2.verify(hash, 'sk_benchmark-secret');
    verifySamples.push(performance.now() - t0);
  }
  return { options: ARGON2_OPTIONS, verify: stats(verifySamples) };
}

/**
 * Exchanges that succeed: one at a time for `short` seconds, then `concurrency` at a time.
 * @param {string} ingressUrl
 * @param {string} authorization the bench key's Basic credentials
 * @param {number} seconds
 * @param {number} short
 * @param {number} concurrency
 */
async function successes(ingressUrl, authorization, seconds, short, concurrency) {
  const request = async () => {
    const res = await fetch(`${ingressUrl}/v1/token`, {
      method: 'POST',
      headers: { authorization },
    });
    await res.arrayBuffer();
    return res.status === 200;
  };
  const single = await closedLoop({ request, concurrency: 1, seconds: short });
  const ok = await closedLoop({ request, concurrency, seconds });
  return { single, ok };
}

/**
 * Failures, each from a fresh address and spread over many keys, so the guard never refuses: a
 * wrong secret for a known ClientID, and an unknown ClientID.
 * @param {string} ingressUrl
 * @param {AdminPost} admin
 * @param {string} tenantId
 * @param {number} short
 */
async function failures(ingressUrl, admin, tenantId, short) {
  const spare = [];
  for (let i = 0; i < 60; i += 1) {
    spare.push(await admin(`/tenants/${tenantId}/api-keys`, { kind: 'secret' }));
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
    seconds: short,
  });
  const unknownClient = await closedLoop({
    request: async () =>
      (await exchangeFrom(
        ingressUrl,
        freshAddress(),
        basic(`ck_unknown${randomInt(1e12)}`, 'sk_wrong'),
      )) === 401,
    concurrency: 1,
    seconds: short,
  });
  return { wrongSecret, unknownClient };
}

/**
 * An attack from one address: after its 30 failures every attempt is refused before hashing.
 * @param {string} ingressUrl
 * @param {number} short
 * @param {number} concurrency
 */
async function guardRefusals(ingressUrl, short, concurrency) {
  const attacker = freshAddress();
  for (let i = 0; i < 40; i += 1) {
    await exchangeFrom(ingressUrl, attacker, basic(`ck_attack${i}`, 'sk_wrong'));
  }
  return closedLoop({
    // The refill lets one attempt in every 2 s: that one is hashed and answers 401.
    request: async () =>
      [429, 401].includes(
        await exchangeFrom(ingressUrl, attacker, basic(`ck_attack${randomInt(1e9)}`, 'x')),
      ),
    concurrency,
    seconds: short,
    warmupSeconds: 0,
  });
}

/**
 * The table's rows: the hash, then each exchange.
 * @param {import('./lib.mjs').Stats} verify
 * @param {Record<'single' | 'ok' | 'wrongSecret' | 'unknownClient' | 'refused', Loop>} x
 * @param {number} concurrency
 */
function tableRows(verify, x, concurrency) {
  /**
   * @param {string} label
   * @param {Loop} r
   */
  const row = (label, r) => ({
    label,
    samples: r.count,
    perSecond: r.perSecond,
    p50: r.p50,
    p99: r.p99,
  });
  return [
    {
      label: 'argon2id verify, in-process (baseline)',
      samples: verify.count,
      perSecond: 1000 / verify.mean,
      p50: verify.p50,
      p99: verify.p99,
    },
    row('exchange 200, 1 at a time', x.single),
    row(`exchange 200, ${concurrency} concurrent`, x.ok),
    row('exchange 401 wrong secret, 1 at a time', x.wrongSecret),
    row('exchange 401 unknown ClientID, 1 at a time', x.unknownClient),
    row(
      `exchange 429 refused by the guard (one address under attack), ${concurrency} concurrent`,
      x.refused,
    ),
  ];
}

/**
 * Throws when an exchange answered other than it should have (the figures would measure errors).
 * @param {Record<string, Loop>} exchanges
 */
function expectedAnswers(exchanges) {
  const unexpected = Object.values(exchanges).reduce((n, r) => n + r.unexpected, 0);
  if (unexpected > 0) {
    const counts = Object.entries(exchanges).map(([k, r]) => `${k}: ${r.unexpected}`);
    throw new Error(`some exchanges answered an unexpected status (${counts.join(', ')})`);
  }
}

/**
 * The rows as the results and the chart have them.
 * @param {ReturnType<typeof tableRows>} rows
 * @param {import('./lib.mjs').Stats} verify
 * @param {number} ceiling hashes a second on every core
 */
function measurements(rows, verify, ceiling) {
  return rows.map(({ label, samples, perSecond, p50, p99 }, i) => ({
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
  }));
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

/**
 * The chart's input (chart.mjs) from this benchmark's results.
 * @param {{ startedAt: string, cores: number, concurrency: number, seconds: number,
 *   measurements: object[] }} s
 */
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
