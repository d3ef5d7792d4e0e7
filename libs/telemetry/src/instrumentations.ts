import type { Attributes } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';
import { RuntimeNodeInstrumentation } from '@opentelemetry/instrumentation-runtime-node';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { isUntracedPath, type ClientSpans } from './settings.js';

/**
 * What the http instrumentation would record on every server span that can name or locate a
 * person: the raw path and query (they hold external ids, often emails), the caller's address
 * (from the socket or X-Forwarded-For) and port, and the user agent; the older semantic
 * conventions' names for the same too. A server span keeps `http.route`, the matched route's
 * pattern (set by the router through setHttpRoute), and is named after it. The start hook's
 * attributes are applied over the instrumentation's own, and an attribute set to undefined is
 * not recorded.
 */
const UNRECORDED_SERVER_ATTRIBUTES: Attributes = Object.fromEntries(
  [
    'url.path',
    'url.query',
    'url.full',
    'client.address',
    'network.peer.address',
    'network.peer.port',
    'user_agent.original',
    'http.target',
    'http.url',
    'http.client_ip',
    'http.user_agent',
    'net.peer.ip',
    'net.peer.port',
  ].map((name) => [name, undefined]),
);

/**
 * The libraries Herald services use, and nothing else (no auto-instrumentations-node bundle);
 * the pg and Redis clients only when their spans are asked for.
 * Every option below that could copy request or record content into a span is left off or
 * narrowed: attributes must never carry personal data (contact emails, names, external ids).
 */
export function heraldInstrumentations(options: {
  sendLogs: boolean;
  /** The database clients that get spans (`HERALD_OTEL_CLIENT_SPANS`); none by default. */
  clientSpans?: readonly ClientSpans[];
  /** Node's event loop, heap and GC as metrics: when any metric is collected at all. */
  runtimeMetrics?: boolean;
  /** The Prometheus endpoint's port: its scrapes are neither traced nor counted as requests. */
  metricsPort?: number;
}): Instrumentation[] {
  const clientSpans = new Set(options.clientSpans ?? []);
  const { metricsPort } = options;
  const instrumentations: Instrumentation[] = [
    // Incoming and outgoing node:http: spans, and the http.server.request.duration and
    // http.client.request.duration histograms. Health probes and metrics scrapes get neither.
    // Request and response headers are not recorded (`headersToSpanAttributes` stays unset),
    // nor is anything in UNRECORDED_SERVER_ATTRIBUTES.
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (request) =>
        isUntracedPath(request.url) ||
        (metricsPort !== undefined && request.socket?.localPort === metricsPort),
      startIncomingSpanHook: () => UNRECORDED_SERVER_ATTRIBUTES,
    }),
    // Kafka has no instrumentation here: the outbox relay's producer spans and the consumers'
    // spans are Herald's own (libs/outbox publish.ts, the contact identity consumer).
    // Global `fetch` (undici) through diagnostics_channel: a client span per call, and the W3C
    // `traceparent` header on service-to-service requests.
    new UndiciInstrumentation(),
    // trace_id / span_id / trace_flags in every pino line written inside a span. The lines go
    // to stdout as before; they are also handed to the SDK's logs exporter only when one was
    // asked for with OTEL_LOGS_EXPORTER.
    new PinoInstrumentation({ disableLogSending: !options.sendLogs }),
  ];
  if (options.runtimeMetrics) {
    // nodejs.eventloop.delay.*, nodejs.eventloop.utilization and .time,
    // v8js.memory.heap.*, v8js.gc.duration: observed at collection, no cost per request.
    instrumentations.push(new RuntimeNodeInstrumentation());
  }
  // Not even loaded unless asked for: an unloaded instrumentation costs nothing per call.
  if (clientSpans.has('pg')) {
    // `pg`: the SQL text with its $1 placeholders, never the bound values.
    instrumentations.push(new PgInstrumentation({ enhancedDatabaseReporting: false }));
  }
  if (clientSpans.has('redis')) {
    // node-redis v4 and v5 (`@redis/client` ^1, ^5) and redis 2.6-3. Only the command name is
    // recorded: keys like `contact:<email>` may embed personal identifiers.
    instrumentations.push(
      new RedisInstrumentation({ dbStatementSerializer: (command) => command }),
    );
  }
  return instrumentations;
}
