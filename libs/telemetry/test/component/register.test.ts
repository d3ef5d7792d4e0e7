// The real mechanism, end to end: a miniature express service (test/fixtures/service.mjs) runs
// in its own Node process as `node --import <built register.js> service.mjs`, exactly how
// services start, so the ESM loader hook and require-in-the-middle patch http, fetch and pino
// for real (jest's own module registry would bypass both). It exports over OTLP/HTTP JSON to a
// fake collector in this process and calls a fake downstream service here, so what is asserted
// is what actually left the process: spans, headers and log lines.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The package's own dist/ is left alone (a parallel `npm run build` may be writing it); the
// test compiles src/ with the real build config into node_modules/.cache, which git, eslint
// and prettier ignore. Dependencies still resolve through the workspace's node_modules.
const buildDir = path.join(packageDir, 'node_modules', '.cache', 'telemetry-test-build');
const fixture = path.join(packageDir, 'test', 'fixtures', 'service.mjs');

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: OtlpAttribute[];
}
interface OtlpTraces {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[];
  }[];
}
interface ExportedSpan extends OtlpSpan {
  scope: string;
  resource: Record<string, string | number | undefined>;
  attrs: Record<string, string | number | undefined>;
}

const SERVER = 2;
const CLIENT = 3;

const flatten = (attributes: OtlpAttribute[]) =>
  Object.fromEntries(
    attributes.map((a) => [
      a.key,
      a.value.stringValue ??
        (a.value.intValue === undefined ? undefined : Number(a.value.intValue)),
    ]),
  );

/** A stand-in OTLP/HTTP collector: keeps every JSON body posted to it, by path. */
function startCollector() {
  const posts: { path: string; body: unknown }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', body: JSON.parse(body) });
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
  });
  const spans = (): ExportedSpan[] =>
    posts
      .filter((p) => p.path === '/v1/traces')
      .flatMap((p) =>
        (p.body as OtlpTraces).resourceSpans.flatMap((rs) =>
          rs.scopeSpans.flatMap((ss) =>
            ss.spans.map((span) => ({
              ...span,
              scope: ss.scope.name,
              resource: flatten(rs.resource.attributes),
              attrs: flatten(span.attributes),
            })),
          ),
        ),
      );
  return { server, posts, spans };
}

/** A stand-in for the next service: records the headers of every request it gets. */
function startDownstream() {
  const headers: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    headers.push(req.headers);
    res.end('in stock');
  });
  return { server, headers };
}

const listen = (server: http.Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );

interface Run {
  code: number | null;
  stderr: string;
  logs: Record<string, unknown>[];
  responses: { path: string; status: number }[];
}

/**
 * Starts the fixture service with `--import register.js`, calls `paths` in order, then stops it
 * with SIGTERM the way an orchestrator does, and returns what it printed.
 */
async function runService(
  env: Record<string, string>,
  paths: string[],
  /** Called after the requests, before SIGTERM (a scrape of the metrics endpoint). */
  during?: () => Promise<void>,
): Promise<Run> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith('OTEL_') && key !== 'NODE_OPTIONS',
    ),
  );
  const child = spawn(
    process.execPath,
    ['--import', pathToFileURL(path.join(buildDir, 'register.js')).href, fixture],
    {
      cwd: packageDir,
      env: {
        ...base,
        TELEMETRY_INDEX: pathToFileURL(path.join(buildDir, 'index.js')).href,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start: ${stderr}`)), 10_000);
    const look = () => {
      const match = /"port":(\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on('data', look);
    void exited.then(() => reject(new Error(`service exited early: ${stderr}`)));
  });

  const responses: Run['responses'] = [];
  for (const p of paths) {
    const response = await fetch(`http://127.0.0.1:${port}${p}`);
    await response.text();
    responses.push({ path: p, status: response.status });
  }
  await during?.();
  child.kill('SIGTERM');
  const code = await exited;
  const logLine = stdout.split('\n').find((line) => line.startsWith('{"logs"'));
  const logs = logLine ? (JSON.parse(logLine) as { logs: Record<string, unknown>[] }).logs : [];
  return { code, stderr, logs, responses };
}

const collector = startCollector();
const downstream = startDownstream();
let collectorUrl: string;
let downstreamUrl: string;

beforeAll(async () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  await promisify(execFile)(
    process.execPath,
    [tsc, '-p', 'tsconfig.build.json', '--outDir', buildDir, '--declaration', 'false'],
    { cwd: packageDir },
  );
  collectorUrl = await listen(collector.server);
  downstreamUrl = await listen(downstream.server);
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => collector.server.close(resolve));
  await new Promise((resolve) => downstream.server.close(resolve));
});

describe('node --import @herald/telemetry/register', () => {
  it('when a service handles requests, then server and fetch spans reach the collector with W3C propagation and correlated logs', async () => {
    collector.posts.length = 0;
    downstream.headers.length = 0;
    const run = await runService(
      {
        OTEL_SERVICE_NAME: 'fixture-service',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
        OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        DOWNSTREAM_URL: downstreamUrl,
      },
      ['/healthz', '/readyz', '/orders/jane.doe@example.com?ref=jane.doe@example.com'],
    );
    expect(run.responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');

    const spans = collector.spans();
    // One trace: the probes produced no span of any kind.
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(spans.some((s) => JSON.stringify(s).includes('healthz'))).toBe(false);
    expect(spans.some((s) => JSON.stringify(s).includes('readyz'))).toBe(false);

    // The incoming request: a server span from the http instrumentation, named by the route the
    // handler gave (setHttpRoute, as Herald's router does).
    const servers = spans.filter((s) => s.kind === SERVER);
    expect(servers).toHaveLength(1);
    const server = servers[0]!;
    expect(server.scope).toBe('@opentelemetry/instrumentation-http');
    expect(server.name).toBe('GET /orders/:id');
    expect(server.attrs['http.route']).toBe('/orders/:id');
    // The raw path and query (an email here) and the caller's address are recorded nowhere.
    expect(spans.some((s) => JSON.stringify(s).includes('jane.doe'))).toBe(false);
    expect(server.attrs).not.toHaveProperty('url.path');
    expect(server.attrs).not.toHaveProperty('client.address');
    expect(server.resource['service.name']).toBe('fixture-service');
    expect(server.resource['service.version']).toBe('0.1.0');
    expect(server.resource['deployment.environment.name']).toBe('test');
    // Express is not instrumented: no span per middleware.
    expect(spans.some((s) => s.scope === '@opentelemetry/instrumentation-express')).toBe(false);

    // The outgoing fetch: a client span, the server span's child, and its context in `traceparent`.
    const client = spans.find((s) => s.kind === CLIENT);
    expect(client?.scope).toBe('@opentelemetry/instrumentation-undici');
    expect(client?.traceId).toBe(server.traceId);
    expect(client?.parentSpanId).toBe(server.spanId);
    const traceparent = String(downstream.headers[0]?.traceparent);
    expect(traceparent).toBe(`00-${server.traceId}-${client?.spanId}-01`);

    // The pino line written in the handler carries the trace and span it was written in.
    const line = run.logs.find((l) => l.msg === 'order read');
    expect(line?.trace_id).toBe(server.traceId);
    expect(spans.map((s) => s.spanId)).toContain(line?.span_id);

    // Metrics went out too (flushed by shutdownTelemetry); logs are not exported by default.
    expect(collector.posts.some((p) => p.path === '/v1/metrics')).toBe(true);
    expect(collector.posts.some((p) => p.path === '/v1/logs')).toBe(false);
  });

  it('when no OTLP endpoint or exporter is configured, then nothing is exported and nothing is printed', async () => {
    collector.posts.length = 0;
    downstream.headers.length = 0;
    const run = await runService({ DOWNSTREAM_URL: downstreamUrl }, ['/orders/7']);
    expect(run.responses[0]?.status).toBe(200);
    expect(run.code).toBe(0);
    // No attempt at localhost:4318 means no connection errors either; nothing on stderr.
    expect(run.stderr).toBe('');
    // With no exporter no tracer provider is registered, so no trace is started here.
    expect(downstream.headers[0]?.traceparent).toBeUndefined();
    expect(run.logs.find((l) => l.msg === 'order read')).not.toHaveProperty('trace_id');
  });

  it('when OTEL_SDK_DISABLED=true, then nothing is exported even with an endpoint configured', async () => {
    collector.posts.length = 0;
    downstream.headers.length = 0;
    const run = await runService(
      {
        OTEL_SDK_DISABLED: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        DOWNSTREAM_URL: downstreamUrl,
      },
      ['/orders/7'],
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(collector.posts).toEqual([]);
    expect(downstream.headers[0]?.traceparent).toBeUndefined();
  });
});

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = http.createServer();
  const url = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return Number(new URL(url).port);
}

describe('the Prometheus endpoint (METRICS_PORT)', () => {
  it('when METRICS_PORT is set, then GET /metrics on it serves RED by route pattern and the runtime, without raw paths, addresses or its own scrapes, and OTLP export still runs beside it', async () => {
    collector.posts.length = 0;
    const metricsPort = await freePort();
    const scrapes: string[] = [];
    const scrape = async () => {
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).toBe(200);
      scrapes.push(await res.text());
    };
    const run = await runService(
      {
        METRICS_PORT: String(metricsPort),
        OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        DOWNSTREAM_URL: downstreamUrl,
      },
      [
        '/healthz',
        '/orders/jane.doe@example.com?ref=jane.doe@example.com',
        '/orders/7',
        '/nowhere',
      ],
      async () => {
        await scrape();
        // The runtime instrumentation reports event-loop delay only from 5 samples (10 ms apart)
        // taken since its last collection: back-to-back scrapes can leave the second without it.
        await new Promise((resolve) => setTimeout(resolve, 250));
        await scrape();
      },
    );
    expect(run.responses.map((r) => r.status)).toEqual([200, 200, 200, 404]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');

    const text = scrapes[1]!;
    const counts = text
      .split('\n')
      .filter((line) => line.startsWith('http_server_request_duration_count'));
    // Two requests on the route, one 404 without a route; no probe and no scrape of /metrics.
    expect(counts).toHaveLength(2);
    const routed = counts.find((line) => line.includes('http_route="/orders/:id"'));
    expect(routed).toMatch(/http_request_method="GET"/);
    expect(routed).toMatch(/http_response_status_code="200"/);
    expect(routed).toMatch(/ 2$/);
    expect(counts.find((line) => !line.includes('http_route'))).toMatch(
      /http_response_status_code="404".* 1$/,
    );
    expect(text).toMatch(/^# TYPE http_client_request_duration histogram$/m);
    expect(text).toMatch(/^nodejs_eventloop_delay_p99\{/m);
    expect(text).toMatch(/^v8js_memory_heap_used\{/m);
    // Nothing that names or locates anyone, and no resource (a random instance id) either.
    expect(text).not.toMatch(
      /jane|url_path|url_query|client_address|server_address|peer_address|user_agent/,
    );
    expect(text).not.toMatch(/127\.0\.0\.1/);
    expect(text).not.toMatch(/^target_info/m);

    // The OTLP exporter pushed its metrics at shutdown as before.
    expect(collector.posts.some((p) => p.path === '/v1/metrics')).toBe(true);
  });

  it('when METRICS_PORT is no port, then the process does not start and says why', async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', pathToFileURL(path.join(buildDir, 'register.js')).href, fixture],
        {
          cwd: packageDir,
          env: { PATH: process.env.PATH, METRICS_PORT: 'ninety' },
          timeout: 10_000,
        },
        (error, _stdout, stderr) =>
          resolve({ code: error && typeof error.code === 'number' ? error.code : 0, stderr }),
      );
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      'METRICS_PORT: must be a TCP port from 1 to 65535 (got "ninety")',
    );
  });
});

describe('package exports', () => {
  it('when a service imports @herald/telemetry/register, then it resolves to the built register.js', () => {
    const pkg = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
    expect(pkg.exports['./register']).toEqual({
      types: './dist/register.d.ts',
      default: './dist/register.js',
    });
    expect(pkg.exports['.'].default).toBe('./dist/index.js');
  });
});
