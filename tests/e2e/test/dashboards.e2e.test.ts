// The Grafana dashboards the chart ships (charts/herald/dashboards/*.json), against the stack's own
// Prometheus after real traffic through the ingress: every query of every panel is evaluated, and
// one that errors or finds no series is a panel that would say "No data". Also: every process is
// scraped, and the alert rules are loaded. What each query found is written to
// <data dir>/test-output/dashboards.json for a person to read.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  PROMETHEUS,
  accessToken,
  admin,
  basic,
  call,
  dataDir,
  exchangeFrom,
  expectStatus,
  newAddress,
  newKey,
  newTenant,
  refusedWhileSuspended,
  repoRoot,
} from './support.js';

const dashboardsDir = path.join(repoRoot, 'charts', 'herald', 'dashboards');
const summaryFile = path.join(dataDir, 'test-output', 'dashboards.json');
/** What Grafana's $__rate_interval comes to with the local stack's 5 s scrapes. */
const RATE_INTERVAL = '1m';

const processes = (
  JSON.parse(
    readFileSync(path.join(repoRoot, 'tools', 'stack', 'src', 'processes.generated.json'), 'utf8'),
  ) as Array<{ name: string }>
).map((p) => p.name);

// ---------------------------------------------------------------------------------------------
// The dashboards, as far as this test reads them.

interface Target {
  refId: string;
  expr?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  type: string;
  query?: string | { query: string };
  regex?: string;
  includeAll?: boolean;
  allValue?: string | null;
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
}

const dashboards = readdirSync(dashboardsDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({
    file,
    dashboard: JSON.parse(readFileSync(path.join(dashboardsDir, file), 'utf8')) as Dashboard,
  }));

/** Every panel, those inside collapsed rows too. */
function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

/** `/^(a|b|c)$/`, a query variable's filter, as its alternatives. */
function alternatives(regex: string | undefined): string[] | null {
  const m = /^\/\^\(([^()]+)\)\$\/$/.exec(regex ?? '');
  return m ? m[1]!.split('|') : null;
}

/**
 * What Grafana puts in place of each variable with "All" selected: the variable's allValue, else
 * every value its filter lets through, as one regex (the processes, for `job`).
 */
function allValues(d: Dashboard): Map<string, string> {
  const values = new Map<string, string>();
  for (const v of d.templating.list) {
    if (v.type === 'datasource') continue;
    if (v.allValue) values.set(v.name, v.allValue);
    else {
      const alts = alternatives(v.regex);
      if (alts) values.set(v.name, `(${alts.join('|')})`);
    }
  }
  return values;
}

/** The expr as Grafana sends it: $__rate_interval and the template variables replaced. */
function substitute(expr: string, values: Map<string, string>): string {
  return expr.replace(
    /\$(?:\{(\w+)(?::\w+)?\}|(\w+))/g,
    (whole, braced?: string, bare?: string) => {
      const name = (braced ?? bare)!;
      if (name === '__rate_interval' || name === '__interval' || name === '__range') {
        return RATE_INTERVAL;
      }
      const value = values.get(name);
      if (value === undefined) throw new Error(`no value for ${whole}`);
      return value;
    },
  );
}

/** The metric families docs/metrics.md lists, with their types. */
function catalogue(): Array<{ name: string; type: string }> {
  const doc = readFileSync(path.join(repoRoot, 'docs', 'metrics.md'), 'utf8');
  return [
    ...doc.matchAll(/^\|\s*`([a-z_:][a-z0-9_:]*)`\s*\|\s*(counter|gauge|histogram)\s*\|/gm),
  ].map((m) => ({ name: m[1]!, type: m[2]! }));
}

/** The series names a PromQL expression selects (each selector here carries a label matcher). */
function selectedNames(expr: string): string[] {
  return [...expr.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{/g)]
    .map((m) => m[1]!)
    .filter(
      (name) => !['by', 'without', 'on', 'ignoring', 'group_left', 'group_right'].includes(name),
    );
}

// ---------------------------------------------------------------------------------------------
// Prometheus's HTTP API.

interface ApiAnswer<T> {
  status: 'success' | 'error';
  data: T;
  error?: string;
}

async function api<T>(route: string): Promise<ApiAnswer<T>> {
  const res = await fetch(`${PROMETHEUS}${route}`);
  return res.json<ApiAnswer<T>>();
}

/** An instant query now: the series found, or the error Prometheus gave. */
async function query(expr: string): Promise<{ series: number; error?: string }> {
  const answer = await api<{ result: unknown[] }>(
    `/api/v1/query?query=${encodeURIComponent(expr)}`,
  );
  if (answer.status !== 'success') return { series: 0, error: answer.error ?? 'failed' };
  return { series: answer.data.result.length };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Traffic through the ingress, enough for every panel to have a series.

beforeAll(async () => {
  const tenantId = await newTenant('Dashboards');
  const token = await accessToken(tenantId, ['contacts:write', 'contacts:read', 'events:write']);

  // auth: failed exchanges of one ClientID until the exchange guard refuses it (429); from an
  // address of this test's own, so that no other test's address allowance is spent.
  const key = await newKey(tenantId, { kind: 'secret', scopes: ['contacts:read'] });
  const address = newAddress();
  const statuses: number[] = [];
  while (!statuses.includes(429) && statuses.length < 20) {
    statuses.push((await exchangeFrom(address, basic(key.clientId, 'sk_not-the-secret'))).status);
  }
  expect(statuses).toContain(401);
  expect(statuses).toContain(429);

  // contacts: an upsert and a read, and a 404 of the service beside nginx's own.
  const email = `dashboards.${randomUUID().slice(0, 8)}@example.com`;
  const externalId = `ext-${randomUUID()}`;
  const created = await call('PUT', `/v1/contacts/${encodeURIComponent(externalId)}`, token, {
    email,
  });
  expect(created.status).toBe(201);
  const contact = await created.json<{ id: string }>();
  await expectStatus(await call('GET', `/v1/contacts/by-id/${contact.id}`, token), 200);
  await expectStatus(await call('GET', `/v1/contacts/by-id/${randomUUID()}`, token), 404);
  await expectStatus(await call('GET', '/v1/no-such-route', token), 404);

  // events: each of the four routes, a resent Event, one repeated in its request, one unresolved.
  const organization = `org-${randomUUID()}`;
  await expectStatus(
    await admin('POST', `/tenants/${tenantId}/organizations`, { externalId: organization }),
    201,
  );
  const event = (fields: Record<string, unknown>) => ({
    eventName: 'Dashboards Checked',
    occurredAt: new Date().toISOString(),
    dedupKey: `dk-${randomUUID()}`,
    ...fields,
  });
  const resent = event({ contactExternalId: externalId });
  const repeated = event({ contactEmail: email });
  for (const [route, body] of [
    ['by-contact-id', event({ contactId: contact.id })],
    ['by-external-id', resent],
    ['by-external-id', resent],
    ['by-email', [repeated, repeated]],
    ['by-organization', event({ organizationExternalId: organization })],
  ] as const) {
    await expectStatus(await call('POST', `/v1/events/${route}`, token, body), 202);
  }
  await expectStatus(
    await call(
      'POST',
      '/v1/events/by-email',
      token,
      event({ contactEmail: `nobody-${randomUUID()}@example.com` }),
    ),
    422,
  );

  // the policy guard: no valid token (401), a read budget spent (429), a suspended Tenant (402).
  await expectStatus(await call('POST', '/v1/events/by-email', 'not-a-token', repeated), 401);
  const reader = await accessToken(await newTenant('Dashboards reader'), ['contacts:read']);
  let limited = false;
  for (let sent = 0; !limited && sent < 2000; sent += 20) {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => call('GET', `/v1/contacts/by-id/${randomUUID()}`, reader)),
    );
    for (const res of answers) {
      if (res.status === 429) limited = true;
      await res.arrayBuffer();
    }
  }
  expect(limited).toBe(true);
  await refusedWhileSuspended('Dashboards suspended', event({ contactEmail: email }));
}, 120_000);

// ---------------------------------------------------------------------------------------------

describe('the dashboards as files', () => {
  it('when the chart ships dashboards, then there are the overview, the Events pipeline and the policies', () => {
    expect(dashboards.map((d) => d.dashboard.uid).sort()).toEqual([
      'herald-events-pipeline',
      'herald-overview',
      'herald-policies',
    ]);
  });

  it.each(dashboards.map((d) => [d.file, d.dashboard] as const))(
    'when %s is read, then it is schema 39 with its data source a Prometheus variable that every query uses, and its process filter names the registry',
    (_file, d) => {
      expect(d.schemaVersion).toBe(39);
      const source = d.templating.list.find((v) => v.name === 'datasource');
      expect(source).toMatchObject({ type: 'datasource', query: 'prometheus' });
      const queries = allPanels(d.panels).filter((p) => p.type !== 'row');
      expect(queries.length).toBeGreaterThan(0);
      for (const panel of queries) {
        expect(panel.targets?.length).toBeGreaterThan(0);
        for (const target of [panel, ...panel.targets!]) {
          expect(target.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
        }
      }
      const job = d.templating.list.find((v) => v.name === 'job');
      if (job) expect(alternatives(job.regex)?.sort()).toEqual([...processes].sort());
    },
  );
  it('when every query is read, then each series it selects is a metric of the catalogue', () => {
    // The query test below needs only one series per query, and a few queries fall back to
    // another metric (`or vector(0)`, a zero rate) while nothing has failed yet: a misspelled
    // name in their first half would still find data. Every name must be one the catalogue
    // lists, and the catalogue test shows each of those in Prometheus.
    const known = new Set([
      // Prometheus's own series about each scrape.
      'up',
      ...catalogue().flatMap(({ name, type }) =>
        type === 'histogram' ? [`${name}_count`, `${name}_bucket`, `${name}_sum`] : [name],
      ),
    ]);
    const unknown = dashboards.flatMap(({ file, dashboard }) =>
      allPanels(dashboard.panels).flatMap((panel) =>
        (panel.targets ?? []).flatMap((t) =>
          selectedNames(t.expr ?? '')
            .filter((name) => !known.has(name))
            .map((name) => `${file} / ${panel.title}: ${name}`),
        ),
      ),
    );
    const selected = dashboards.flatMap(({ dashboard }) =>
      allPanels(dashboard.panels).flatMap((p) =>
        (p.targets ?? []).flatMap((t) => selectedNames(t.expr ?? '')),
      ),
    );
    expect(selected.length).toBeGreaterThan(30);
    expect(unknown).toEqual([]);
  });
});

describe("the stack's Prometheus", () => {
  it("when it is asked for its targets, then it scrapes every process of the registry and the backing services' exporters, each under its own name, and every one is up", async () => {
    interface Targets {
      activeTargets: Array<{ labels: Record<string, string>; health: string; lastError: string }>;
    }
    let targets: Targets['activeTargets'] = [];
    // A target is "unknown" until its first scrape.
    for (let i = 0; i < 40; i += 1) {
      targets = (await api<Targets>('/api/v1/targets?state=active')).data.activeTargets;
      if (targets.length > 0 && targets.every((t) => t.health !== 'unknown')) break;
      await sleep(500);
    }
    // PostgreSQL, Redis and nginx through Debian's exporters, Kafka through its JMX agent.
    const backing = ['kafka', 'nginx', 'postgres', 'redis'];
    expect(targets.map((t) => t.labels.job).sort()).toEqual([...processes, ...backing].sort());
    expect(
      targets.filter((t) => t.health !== 'up').map((t) => `${t.labels.job}: ${t.lastError}`),
    ).toEqual([]);
  });

  it('when it is asked for its rules, then the alert rules of tools/observability/src/alert-rules.mjs are loaded', async () => {
    const answer = await api<{ groups: Array<{ rules: unknown[] }> }>('/api/v1/rules');
    expect(answer.status).toBe('success');
    expect(answer.data.groups.flatMap((g) => g.rules).length).toBeGreaterThan(0);
  });
});

interface Result {
  dashboard: string;
  panel: string;
  refId: string;
  expr: string;
  query: string;
  series: number;
  error?: string;
}

describe('the metric catalogue in Prometheus', () => {
  it('when that traffic was scraped, then every metric docs/metrics.md lists has a series', async () => {
    const documented = catalogue();
    // A histogram is its _count (and _bucket, _sum) series; counters and gauges their own name.
    const exprOf = ({ name, type }: { name: string; type: string }) =>
      type === 'histogram' ? `${name}_count` : name;
    const absent = async () => {
      const missing: string[] = [];
      for (const metric of documented) {
        if ((await query(exprOf(metric))).series === 0) missing.push(metric.name);
      }
      return missing;
    };
    let missing = await absent();
    const deadline = Date.now() + 30_000;
    while (missing.length > 0 && Date.now() < deadline) {
      await sleep(2500);
      missing = await absent();
    }
    expect(documented.length).toBeGreaterThan(30);
    expect(missing).toEqual([]);
  }, 60_000);
});

describe('every panel of every dashboard', () => {
  it('when each query is evaluated after that traffic, then none errors and each finds at least one series', async () => {
    const evaluate = async (): Promise<Result[]> => {
      const results: Result[] = [];
      for (const { file, dashboard } of dashboards) {
        const values = allValues(dashboard);
        for (const panel of allPanels(dashboard.panels)) {
          for (const target of panel.targets ?? []) {
            if (!target.expr) continue;
            const q = substitute(target.expr, values);
            results.push({
              dashboard: file,
              panel: panel.title,
              refId: target.refId,
              expr: target.expr,
              query: q,
              ...(await query(q)),
            });
          }
        }
      }
      return results;
    };
    const failing = (results: Result[]) => results.filter((r) => r.error || r.series === 0);
    // Scrapes come every 5 s, and a rate needs two of them after a series first appears: empty
    // answers are asked again for a while; errors will not mend.
    let results = await evaluate();
    const deadline = Date.now() + 60_000;
    while (failing(results).some((r) => !r.error) && Date.now() < deadline) {
      await sleep(2500);
      results = await evaluate();
    }

    mkdirSync(path.dirname(summaryFile), { recursive: true });
    writeFileSync(
      summaryFile,
      `${JSON.stringify(
        {
          prometheus: PROMETHEUS,
          evaluatedAt: new Date().toISOString(),
          rateInterval: RATE_INTERVAL,
          dashboards: dashboards.map(({ file, dashboard }) => ({
            file,
            uid: dashboard.uid,
            title: dashboard.title,
            panels: results
              .filter((r) => r.dashboard === file)
              .map(({ panel, refId, query: q, series, error }) => ({
                panel,
                refId,
                query: q,
                series,
                ...(error ? { error } : {}),
              })),
          })),
        },
        null,
        2,
      )}\n`,
    );

    expect(results.length).toBeGreaterThan(0);
    expect(
      failing(results).map(
        (r) => `${r.dashboard} / ${r.panel} / ${r.refId}: ${r.error ?? 'no series'}: ${r.expr}`,
      ),
    ).toEqual([]);
  }, 120_000);

  it('when the dashboards are drawn from that Prometheus, then each is a picture of all its panels, every one with data', () => {
    const out = path.join(dataDir, 'test-output', 'dashboards');
    const drawn = JSON.parse(
      execFileSync(
        process.execPath,
        [
          path.join(repoRoot, 'tools', 'observability', 'src', 'render-dashboards.mjs'),
          '--json',
          '--minutes',
          '5',
          '--out',
          out,
        ],
        { env: { ...process.env, HERALD_PROMETHEUS_URL: PROMETHEUS }, encoding: 'utf8' },
      ),
    ) as Array<{
      uid: string;
      file: string;
      width: number;
      height: number;
      panels: Array<{ title: string; series: number }>;
    }>;
    expect(drawn.map((d) => d.uid).sort()).toEqual(
      dashboards.map(({ dashboard }) => dashboard.uid).sort(),
    );
    for (const d of drawn) {
      const png = readFileSync(d.file);
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(d.width).toBeGreaterThan(1000);
      expect(d.height).toBeGreaterThan(600);
      const panels = allPanels(dashboards.find((x) => x.dashboard.uid === d.uid)!.dashboard.panels);
      expect(d.panels.map((p) => p.title)).toEqual(
        panels.filter((p) => p.type !== 'row').map((p) => p.title),
      );
      expect(d.panels.filter((p) => p.series === 0).map((p) => `${d.uid}: ${p.title}`)).toEqual([]);
    }
  }, 60_000);
});
