// OpenTelemetry for every Herald service. Load it with `node --import @herald/telemetry/register`
// so the SDK starts before any instrumented module is imported; see README.md.
//
// PERSONAL DATA: never put personal data into span attributes, span names, span events, metric
// attributes, baggage or error messages: no contact emails, names, phone numbers, external ids,
// IP addresses or request bodies. Telemetry leaves Herald's data boundary (collectors, vendors)
// and is kept longer than the data it describes. Use counts, opaque internal ids, enum-like
// values (event name, outcome, error code) and durations.
import {
  SpanStatusCode,
  context,
  defaultTextMapSetter,
  metrics,
  trace,
  type Attributes,
  type Context,
  type Meter,
  type MeterOptions,
  type Span,
} from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { NodeSDK, core, resources, type NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { heraldInstrumentations } from './instrumentations.js';
import { heraldMetricViews, metricReadersFor } from './metrics.js';
import { heraldSampler } from './sampling.js';
import {
  isTelemetryDisabled,
  metricsEndpoint,
  requestedClientSpans,
  resolveServiceIdentity,
  unrequestedSignals,
  type Env,
} from './settings.js';

export {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Counter,
  type Histogram,
  type Link,
  type Meter,
  type ObservableResult,
  type Span,
  type SpanContext,
  type UpDownCounter,
} from '@opentelemetry/api';
export { batchSpanPlacement, withConsumedBatchSpan } from './batch-span.js';
export {
  isTelemetryDisabled,
  metricsEndpoint,
  TelemetrySettingError,
  type MetricsEndpoint,
} from './settings.js';

type SpanProcessor = NonNullable<NodeSDKConfiguration['spanProcessors']>[number];
type MetricReader = NonNullable<NodeSDKConfiguration['metricReaders']>[number];

export interface TelemetryOptions {
  /** Wins over OTEL_SERVICE_NAME. Defaults to OTEL_SERVICE_NAME, then the service's package.json. */
  serviceName?: string;
  /** Defaults to the service's package.json version (npm_package_version without one). */
  serviceVersion?: string;
  /**
   * Replaces the span processors the SDK would build from OTEL_TRACES_EXPORTER, e.g. a
   * SimpleSpanProcessor around an InMemorySpanExporter in tests.
   */
  spanProcessors?: SpanProcessor[];
  /**
   * Replaces the metric readers built from METRICS_PORT (the Prometheus endpoint) and
   * OTEL_METRICS_EXPORTER, e.g. an InMemoryMetricExporter's reader in tests.
   */
  metricReaders?: MetricReader[];
}

export interface Telemetry {
  /** False when OTEL_SDK_DISABLED=true: nothing was started and every API call is a no-op. */
  readonly enabled: boolean;
  /** Flushes what is buffered and stops the SDK. Never rejects; safe to call more than once. */
  shutdown(): Promise<void>;
}

// On globalThis rather than in a module variable so that a second copy of this package (a
// bundled service, a duplicate install) still finds and shuts down the SDK the first started.
const STATE = Symbol.for('herald.telemetry');
type Holder = { [STATE]?: Telemetry };
const holder = globalThis as Holder;

/**
 * Names the route pattern that matched the request being handled (`/v1/contacts/:externalId`,
 * never the raw path). The http instrumentation reads it when the answer is sent: the server
 * span's `http.route` and name, and the `http_route` label of the request metrics. Herald's
 * router calls it (`mountRoutes` in @herald/http); Express itself is not instrumented, which
 * would wrap every middleware of every request for spans nobody reads.
 */
export function setHttpRoute(pattern: string, from: Context = context.active()): void {
  const rpc = core.getRPCMetadata(from);
  if (rpc?.type === core.RPCType.HTTP) rpc.route = pattern;
}

/** How long shutdown waits for the exporters before giving up, so exit is never held hostage. */
const SHUTDOWN_TIMEOUT_MS = 5_000;

const disabledTelemetry: Telemetry = { enabled: false, shutdown: () => Promise.resolve() };

/** W3C `traceparent` and `tracestate`, no baggage: what services propagate unless told otherwise. */
const traceContext = new core.W3CTraceContextPropagator();

/**
 * Starts the OpenTelemetry NodeSDK once per process and returns its handle; later calls return
 * the same handle. `@herald/telemetry/register` calls it with no options before the service's
 * code loads, which is the only way the http, express and pino modules (and pg and
 * redis, when `HERALD_OTEL_CLIENT_SPANS` asks for their spans) get patched; calling it from service code after those imports yields spans for fetch only.
 *
 * Exporters come from the standard OTEL_* variables through the SDK's own handling, except that
 * a signal with neither an exporter named (OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER) nor an
 * OTLP endpoint set gets no exporter instead of the SDK's default OTLP to localhost:4318. Logs
 * are exported only when OTEL_LOGS_EXPORTER is set. Propagation is W3C tracecontext alone
 * unless OTEL_PROPAGATORS says otherwise: no `baggage` is read from callers or sent on.
 *
 * No signal handler is installed (one would stop Node's default exit on SIGTERM): the service's
 * graceful shutdown calls `shutdownTelemetry()` last. When the event loop simply runs dry,
 * buffered telemetry is flushed on `beforeExit`.
 */
export function startTelemetry(options: TelemetryOptions = {}): Telemetry {
  const running = holder[STATE];
  if (running) return running;
  const env: Env = process.env;
  if (isTelemetryDisabled(env)) {
    holder[STATE] = disabledTelemetry;
    return disabledTelemetry;
  }

  const identity = resolveServiceIdentity(options, env);
  const base: Attributes = {};
  if (identity.fallbackName !== undefined) base['service.name'] = identity.fallbackName;
  if (identity.version !== undefined) base['service.version'] = identity.version;

  const off = new Set(unrequestedSignals(env));
  // Throws on a METRICS_PORT that is no port: the process does not start without its metrics.
  const prometheus = metricsEndpoint(env);
  const clientSpans = requestedClientSpans(env);
  if (clientSpans.unknown.length > 0) {
    process.emitWarning(
      `HERALD_OTEL_CLIENT_SPANS: ignoring ${clientSpans.unknown.join(', ')} (known: pg, redis, all)`,
      'HeraldTelemetryWarning',
    );
  }
  // The Prometheus endpoint (METRICS_PORT) and the OTLP (or console) export beside it.
  const metricReaders =
    options.metricReaders ?? metricReadersFor(env, { prometheus, otlp: !off.has('metrics') });
  const instrumentations: Instrumentation[] = heraldInstrumentations({
    sendLogs: !off.has('logs'),
    clientSpans: clientSpans.spans,
    runtimeMetrics: metricReaders.length > 0,
    ...(prometheus ? { metricsPort: prometheus.port } : {}),
  });
  const config: Partial<NodeSDKConfiguration> = {
    // Detected attributes (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES such as
    // deployment.environment.name, process, host) are merged over this base by the SDK.
    resource: resources.defaultResource().merge(resources.resourceFromAttributes(base)),
    instrumentations,
  };
  if (identity.explicitName !== undefined) config.serviceName = identity.explicitName;
  // OTEL_TRACES_SAMPLER as the SDK reads it, except that a parent-based sampler also keeps a root
  // span linked to a sampled one (a batch of several sampled traces' work, e.g. an outbox publish).
  const sampler = heraldSampler(env);
  if (sampler) config.sampler = sampler;
  // Not the SDK's default, which adds W3C baggage: any caller on the internet could then send
  // baggage that every outgoing call and message would carry on.
  if (!env.OTEL_PROPAGATORS?.trim()) config.textMapPropagator = traceContext;
  // An empty list is how the SDK spells "none" in code: no provider is registered at all.
  if (options.spanProcessors) config.spanProcessors = options.spanProcessors;
  else if (off.has('traces')) config.spanProcessors = [];
  // An empty list registers no meter provider: every instrument is the API's no-op.
  config.metricReaders = metricReaders;
  // Attributes that could name or locate a person never reach any metric (see metrics.ts).
  config.views = heraldMetricViews();
  if (off.has('logs')) config.logRecordProcessors = [];

  const sdk = new NodeSDK(config);
  sdk.start();

  let stopping: Promise<void> | undefined;
  const telemetry: Telemetry = {
    enabled: true,
    shutdown: () => (stopping ??= stop(sdk, instrumentations)),
  };
  holder[STATE] = telemetry;
  process.once('beforeExit', () => void telemetry.shutdown());
  return telemetry;
}

async function stop(sdk: NodeSDK, instrumentations: Instrumentation[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), SHUTDOWN_TIMEOUT_MS);
    timer.unref();
  });
  try {
    const outcome = await Promise.race([sdk.shutdown().then(() => 'done' as const), timeout]);
    if (outcome === 'timeout') {
      process.emitWarning(
        `telemetry shutdown gave up after ${SHUTDOWN_TIMEOUT_MS} ms; some spans or metrics were not exported`,
        'HeraldTelemetryWarning',
      );
    }
  } catch (error) {
    process.emitWarning(
      `telemetry shutdown failed: ${error instanceof Error ? error.message : String(error)}`,
      'HeraldTelemetryWarning',
    );
  } finally {
    clearTimeout(timer);
    // Unpatch modules and unsubscribe from diagnostics channels: nothing is exported any more.
    for (const instrumentation of instrumentations) instrumentation.disable();
  }
}

/**
 * Flushes and stops telemetry started by `startTelemetry` or `@herald/telemetry/register`.
 * Call it last in the service's graceful shutdown, after the HTTP server and the Kafka, Redis
 * and PostgreSQL clients have closed (their final spans are then included), and before
 * `process.exit`. It never calls `process.exit` itself and never rejects.
 */
export function shutdownTelemetry(): Promise<void> {
  return holder[STATE]?.shutdown() ?? Promise.resolve();
}

/**
 * The meter for one part of a service, for domain facts. Give instruments a unit and keep
 * attribute values to small, fixed sets (never personal data, never unbounded ids):
 *
 *   const accepted = meter('herald.ingress').createCounter('events.accepted', {
 *     unit: '{event}',
 *     description: 'Events accepted for recording',
 *   });
 *   accepted.add(batch.length, { 'event.source': 'api' });
 *
 * Without a metrics exporter configured this is the API's no-op meter.
 */
export function meter(name: string, version?: string, options?: MeterOptions): Meter {
  return metrics.getMeter(name, version, options);
}

const TRACER_NAME = '@herald/telemetry';

/** The only form W3CTraceContextPropagator writes: version 00, trace id, span id, flags. */
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** The W3C limit; a longer `tracestate` is dropped whole, as a cut one could be wrong. */
const MAX_TRACESTATE_LENGTH = 512;

/**
 * The headers that carry a trace into a message stored for later (an outbox row, then its Kafka
 * message): `traceparent`, and `tracestate` when it is within 512 characters; none outside a
 * valid trace. Never `baggage`, whatever OTEL_PROPAGATORS says: a caller's baggage would be
 * copied into every row (one request of 1,000 Events once wrote 6.4 MB of headers).
 */
export function messageTraceHeaders(from: Context = context.active()): Record<string, string> {
  const injected: Record<string, string> = {};
  traceContext.inject(from, injected, defaultTextMapSetter);
  const { traceparent, tracestate } = injected;
  if (traceparent === undefined || !TRACEPARENT.test(traceparent)) return {};
  if (!tracestate || tracestate.length > MAX_TRACESTATE_LENGTH) return { traceparent };
  return { traceparent, tracestate };
}

/**
 * Runs `fn` inside a new active span (child of the current one), ends the span when `fn`
 * settles, and on a throw or rejection records the exception and sets the ERROR status before
 * rethrowing. Attributes describe the operation, never the person: see the rule at the top of
 * this file (an exception's message is recorded too, so error messages must not carry personal
 * data either).
 *
 *   await withSpan('contacts.merge', { 'herald.contact_count': ids.length }, () => merge(ids));
 */
export function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => T | Promise<T>,
): Promise<T> {
  return trace
    .getTracer(TRACER_NAME)
    .startActiveSpan(name, { attributes }, async (span): Promise<T> => {
      try {
        return await fn(span);
      } catch (error) {
        if (error instanceof Error) {
          span.recordException(error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
        } else {
          span.recordException(String(error));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        throw error;
      } finally {
        span.end();
      }
    });
}
