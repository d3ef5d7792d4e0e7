// Traffic through a rollout: a loop of requests on three routes, and k6's smoke scenario
// (loadtest/run.mjs), both running while helm upgrades or rolls back the release; any failed
// request of either fails the step.
import { spawn } from 'node:child_process';
import { repoRoot } from '@herald/stack/config.mjs';
import { sleep } from '@herald/stack/processes.mjs';
import { eventBody } from './clients.mjs';
import { helm } from './kube.mjs';

/** How long k6's smoke scenario runs during a rollout: longer than a rollout takes here. */
const K6_ROLLOUT_SECONDS = 120;

/** @typedef {import('./release.mjs').Urls} Urls */
/** @typedef {import('./clients.mjs').Fixture} Fixture */
/**
 * Answers of the request loop: by status, and the failures by route and cause.
 * @typedef {{ total: number, ok: number, failed: number, byStatus: Record<string, number>,
 *   errors: Record<string, number> }} Counts
 */

/**
 * `helm <args>` (an upgrade or a rollback) under the request loop and k6's smoke scenario;
 * the step's detail, or an error when a request of either failed.
 * @param {string} label
 * @param {string[]} args
 * @param {{ urls: Urls, fx: Fixture, routerUrl: string }} target
 */
export async function rolloutUnderLoad(label, args, { urls, fx, routerUrl }) {
  const loop = requestLoop(urls, fx);
  /** @type {Promise<{ verdict?: string, error?: string }>} */
  const k6 = k6Smoke(routerUrl, K6_ROLLOUT_SECONDS).then(
    (verdict) => ({ verdict }),
    (err) => ({ error: err.message }),
  );
  await sleep(2_000);
  try {
    await helm(args);
  } finally {
    await sleep(5_000); // the old pods' endpoints removal and shutdown settle
    await loop.stop();
  }
  const c = loop.counts;
  console.log(`  ${label}: ${describeCounts(c)}`);
  const smoke = await k6;
  console.log(`  ${label}, k6: ${smoke.verdict ?? smoke.error}`);
  if (c.failed > 0)
    throw new Error(
      `${c.failed} of ${c.total} requests failed during the rollout: ${describeCounts(c)}`,
    );
  if (smoke.error) throw new Error(`k6 during the rollout: ${smoke.error}`);
  return `${describeCounts(c)}; k6: ${smoke.verdict}`;
}

/**
 * Requests in a loop until stopped, one at a time per route: an Event recorded, the Contact
 * read, the JWKS read. Counts answers by status; a refused or reset connection counts as failed.
 * @param {Urls} urls
 * @param {Fixture} fx
 */
function requestLoop(urls, fx) {
  /** @type {Counts} */
  const counts = { total: 0, ok: 0, failed: 0, byStatus: {}, errors: {} };
  let running = true;
  /** @type {[string, () => Promise<Response>][]} */
  const routes = [
    [
      'POST /v1/events/by-contact-id',
      () =>
        fetch(`${urls.events}/v1/events/by-contact-id`, {
          method: 'POST',
          headers: { authorization: fx.bearer, 'content-type': 'application/json' },
          body: JSON.stringify(eventBody(fx.contact, 'Rollout Probe')),
          signal: AbortSignal.timeout(10_000),
        }),
    ],
    [
      'GET /v1/contacts/:externalId',
      () =>
        fetch(`${urls.contacts}/v1/contacts/${fx.contact.externalId ?? ''}`, {
          headers: { authorization: fx.bearer },
          signal: AbortSignal.timeout(10_000),
        }),
    ],
    [
      'GET /.well-known/jwks.json',
      () => fetch(`${urls.auth}/.well-known/jwks.json`, { signal: AbortSignal.timeout(10_000) }),
    ],
  ];
  const loops = routes.map(async ([route, send]) => {
    while (running) {
      counts.total += 1;
      try {
        const res = await send();
        await res.arrayBuffer();
        counts.byStatus[res.status] = (counts.byStatus[res.status] ?? 0) + 1;
        if (res.status < 500 && res.status !== 429 && res.status < 400) counts.ok += 1;
        else {
          counts.failed += 1;
          const why = `${route}: ${res.status}`;
          counts.errors[why] = (counts.errors[why] ?? 0) + 1;
        }
      } catch (err) {
        counts.failed += 1;
        const why = `${route}: ${err.cause?.code ?? err.name}`;
        counts.errors[why] = (counts.errors[why] ?? 0) + 1;
      }
      await sleep(50);
    }
  });
  return {
    counts,
    async stop() {
      running = false;
      await Promise.all(loops);
      return counts;
    },
  };
}

/**
 * The k6 smoke scenario (loadtest/run.mjs) against `baseUrl`, for `seconds`: a Tenant, a key and
 * an organization made through the operator routes, then every public route. Resolves with its
 * closing line; rejects when k6 failed a threshold (any failed request, check or 429 does).
 * @param {string} baseUrl
 * @param {number} seconds
 * @returns {Promise<string>}
 */
export function k6Smoke(baseUrl, seconds) {
  return new Promise((resolve, reject) => {
    /** @type {NodeJS.ProcessEnv} */
    const env = { ...process.env, HERALD_INGRESS_URL: baseUrl, DURATION: `${seconds}s` };
    delete env.HERALD_TEST_RESULTS_DIR; // not one of npm test's results
    const child = spawn(process.execPath, ['loadtest/run.mjs', 'smoke'], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const verdict = output.split('\n').find((l) => l.startsWith('loadtest smoke')) ?? '';
      if (code === 0) resolve(verdict);
      else {
        for (const line of output.trim().split('\n').slice(-40)) console.log(`  k6 | ${line}`);
        reject(new Error(verdict || `k6 smoke exited ${code}`));
      }
    });
  });
}

/** @param {Counts} c */
const describeCounts = (c) =>
  `${c.total} requests, ${c.ok} ok, ${c.failed} failed; by status ${JSON.stringify(c.byStatus)}` +
  (Object.keys(c.errors).length ? `; errors ${JSON.stringify(c.errors)}` : '');
