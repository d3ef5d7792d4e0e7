// Pure decisions about the environment, kept apart from the SDK so they can be tested alone.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

export type Env = Record<string, string | undefined>;

/** A signal whose exporter the SDK would otherwise pick from `OTEL_<SIGNAL>_EXPORTER`. */
export type Signal = 'traces' | 'metrics' | 'logs';

const set = (value: string | undefined): value is string =>
  value !== undefined && value.trim() !== '';

/** `OTEL_SDK_DISABLED=true` (any case, spaces allowed) turns everything off, as the OpenTelemetry specification says. */
export function isTelemetryDisabled(env: Env = process.env): boolean {
  return env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
}

/**
 * The signals to switch off because nobody asked for them. Left alone, the SDK defaults every
 * signal to the OTLP exporter at http://localhost:4318 and keeps trying it when no collector
 * runs (the local stack, tests, a developer's laptop). So a signal stays with the
 * SDK's own env handling only when its exporter is named (`OTEL_TRACES_EXPORTER=console`, ...)
 * or an OTLP endpoint for it is configured; otherwise it gets no exporter at all.
 *
 * Logs are different: Herald writes its logs to stdout with pino (correlated with trace_id and
 * span_id), where the platform collects them, so they are only exported through the SDK when
 * `OTEL_LOGS_EXPORTER` says so.
 */
export function unrequestedSignals(env: Env = process.env): Signal[] {
  const anyEndpoint = set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const off: Signal[] = [];
  if (
    !set(env.OTEL_TRACES_EXPORTER) &&
    !anyEndpoint &&
    !set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  )
    off.push('traces');
  if (
    !set(env.OTEL_METRICS_EXPORTER) &&
    !anyEndpoint &&
    !set(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)
  )
    off.push('metrics');
  if (!set(env.OTEL_LOGS_EXPORTER)) off.push('logs');
  return off;
}

/** Where a process serves its metrics to Prometheus: its own port, apart from the API's. */
export interface MetricsEndpoint {
  /** The interface it listens on: HOST, as the service's own server (127.0.0.1 without it). */
  host: string;
  port: number;
  /** Always `/metrics`. */
  path: string;
}

/** A setting the process cannot start with; the message names the variable and the rule. */
export class TelemetrySettingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TelemetrySettingError';
  }
}

const TCP_PORT = /^\d{1,5}$/;

/**
 * The Prometheus endpoint asked for with `METRICS_PORT` (a TCP port, 1..65535, not the service's
 * own PORT), on HOST; undefined when it is unset or blank, and then no port is opened (tests,
 * a process run by hand). A value that is no such port throws: the process refuses to start,
 * naming it, rather than run without the metrics its operators scrape.
 */
export function metricsEndpoint(env: Env = process.env): MetricsEndpoint | undefined {
  if (!set(env.METRICS_PORT)) return undefined;
  const raw = env.METRICS_PORT.trim();
  const port = Number(raw);
  if (!TCP_PORT.test(raw) || port < 1 || port > 65535) {
    throw new TelemetrySettingError(
      `METRICS_PORT: must be a TCP port from 1 to 65535 (got ${JSON.stringify(env.METRICS_PORT)})`,
    );
  }
  if (set(env.PORT) && Number(env.PORT.trim()) === port) {
    throw new TelemetrySettingError(
      `METRICS_PORT: must differ from PORT (${port}): metrics are served apart from the API`,
    );
  }
  return { host: set(env.HOST) ? env.HOST.trim() : '127.0.0.1', port, path: '/metrics' };
}

/** The metric exporters named in OTEL_METRICS_EXPORTER, as the SDK reads it (default otlp). */
export type MetricExporterName = 'otlp' | 'console' | 'prometheus';

export function requestedMetricExporters(env: Env = process.env): {
  exporters: MetricExporterName[];
  unknown: string[];
} {
  const names = (env.OTEL_METRICS_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (names.includes('none')) return { exporters: [], unknown: [] };
  const known: MetricExporterName[] = ['otlp', 'console', 'prometheus'];
  const exporters = new Set<MetricExporterName>();
  const unknown: string[] = [];
  for (const name of names.length > 0 ? names : ['otlp']) {
    if ((known as string[]).includes(name)) exporters.add(name as MetricExporterName);
    else unknown.push(name);
  }
  return { exporters: [...exporters], unknown };
}

/** OTEL_METRIC_EXPORT_INTERVAL and _TIMEOUT (ms) as the SDK reads them: 60 s, 30 s, timeout <= interval. */
export function metricExportTiming(env: Env = process.env): {
  intervalMs: number;
  timeoutMs: number;
} {
  const number = (value: string | undefined, fallback: number) => {
    const n = set(value) ? Number(value.trim()) : NaN;
    return Number.isFinite(n) && n >= 0 ? n : fallback;
  };
  const intervalMs = number(env.OTEL_METRIC_EXPORT_INTERVAL, 60_000);
  return {
    intervalMs,
    timeoutMs: Math.min(number(env.OTEL_METRIC_EXPORT_TIMEOUT, 30_000), intervalMs),
  };
}

/** Database client instrumentations that are off unless asked for. */
export type ClientSpans = 'pg' | 'redis';
const CLIENT_SPANS: readonly ClientSpans[] = ['pg', 'redis'];

/**
 * The database client spans asked for in `HERALD_OTEL_CLIENT_SPANS` (a comma list of `pg`,
 * `redis`; `all` for both), and the names it held that mean nothing. Off by default: a request
 * makes several queries and Redis calls, so these spans multiplied the spans per trace (and the
 * cost of tracing) several times over, while the server span already shows how long each
 * request took. Turn them on to chase a slow query; nothing else about the spans changes.
 */
export function requestedClientSpans(env: Env = process.env): {
  spans: ClientSpans[];
  unknown: string[];
} {
  const names = (env.HERALD_OTEL_CLIENT_SPANS ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  const spans = new Set<ClientSpans>();
  const unknown: string[] = [];
  for (const name of names) {
    if (name === 'all') CLIENT_SPANS.forEach((s) => spans.add(s));
    else if ((CLIENT_SPANS as readonly string[]).includes(name)) spans.add(name as ClientSpans);
    else unknown.push(name);
  }
  return { spans: CLIENT_SPANS.filter((s) => spans.has(s)), unknown };
}

export interface ServiceIdentity {
  /** Set only when the code passed one: it then wins over OTEL_SERVICE_NAME. */
  explicitName?: string;
  /** From package.json or npm: a default that OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES override. */
  fallbackName?: string;
  version?: string;
}

interface PackageJson {
  name?: unknown;
  version?: unknown;
}

/** `@herald/auth` becomes `herald-auth`: no `@` or `/` in a service name. */
export function serviceNameFromPackage(name: string): string {
  return name.replace(/^@/, '').replace(/\//g, '-');
}

/**
 * The nearest package.json above `from`, skipping anything inside node_modules (under jest or
 * another runner the entry script is the runner's, not the service's).
 */
export function findPackageJson(from: string): PackageJson | undefined {
  let dir = from;
  for (;;) {
    if (dir.split(path.sep).includes('node_modules')) return undefined;
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
      } catch {
        return undefined;
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function servicePackage(entry: string | undefined, cwd: string): PackageJson | undefined {
  if (entry) {
    try {
      const found = findPackageJson(path.dirname(realpathSync(entry)));
      if (found) return found;
    } catch {
      // The entry may be `-e`, a REPL or a deleted file: fall back to the working directory.
    }
  }
  return findPackageJson(cwd);
}

/**
 * Who this process is. The name: the code's `serviceName`, else OTEL_SERVICE_NAME (applied by
 * the SDK), else `service.name` in OTEL_RESOURCE_ATTRIBUTES, else the name in the service's
 * package.json (`@herald/auth` → `herald-auth`). The version: the code's `serviceVersion`, else
 * the package.json version; OTEL_RESOURCE_ATTRIBUTES=service.version=... overrides it.
 *
 * "The service's package.json" is the nearest one above the entry script (`process.argv[1]`),
 * else above the working directory. Only when neither exists (a bundled image) do npm's
 * `npm_package_name` / `npm_package_version` stand in: they describe whichever package ran
 * `npm run`, which for the local stack is the workspace root, not the service.
 */
export function resolveServiceIdentity(
  given: { serviceName?: string; serviceVersion?: string },
  env: Env = process.env,
  entry: string | undefined = process.argv[1],
  cwd: string = process.cwd(),
): ServiceIdentity {
  const pkg = servicePackage(entry, cwd);
  const text = (value: unknown) => (typeof value === 'string' && set(value) ? value : undefined);
  const name = pkg ? text(pkg.name) : text(env.npm_package_name);
  const version = pkg ? text(pkg.version) : text(env.npm_package_version);
  return {
    explicitName: text(given.serviceName),
    fallbackName: name === undefined ? undefined : serviceNameFromPackage(name),
    version: text(given.serviceVersion) ?? version,
  };
}

/** Health probes are polled every few seconds; a span per probe is noise. */
export const UNTRACED_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

export function isUntracedPath(url: string | undefined): boolean {
  if (url === undefined) return false;
  const pathOnly = url.split('?', 1)[0] ?? url;
  return UNTRACED_PATHS.has(pathOnly.length > 1 ? pathOnly.replace(/\/+$/, '') : pathOnly);
}
