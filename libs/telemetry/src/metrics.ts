// Where metrics go: the Prometheus endpoint on METRICS_PORT (scraped, its own port, never the
// API's) and, beside it, the push exporters OTEL_METRICS_EXPORTER names (OTLP by default, as
// the SDK does). And what they never carry: the attributes that could name or locate a person.
import { createRequire } from 'node:module';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import {
  ConsoleMetricExporter,
  PeriodicExportingMetricReader,
  createDenyListAttributesProcessor,
  type IMetricReader,
  type PushMetricExporter,
  type ViewOptions,
} from '@opentelemetry/sdk-metrics';
import {
  metricExportTiming,
  requestedMetricExporters,
  type Env,
  type MetricsEndpoint,
} from './settings.js';

/**
 * Attributes no metric keeps, whatever instrumentation records them: the raw path and query
 * (external ids, emails), full URLs, the caller's address and port, the user agent, the address
 * of the server called (an IP in many setups), a Kafka message key (a Contact id), and the older
 * semantic conventions' names for the same. `http.route` (the pattern), the method, the status,
 * `error.type` and the like stay.
 */
export const UNRECORDED_METRIC_ATTRIBUTES: readonly string[] = [
  'url.path',
  'url.query',
  'url.full',
  'client.address',
  'client.port',
  'network.peer.address',
  'network.peer.port',
  'network.local.address',
  'network.local.port',
  'server.address',
  'server.port',
  'user_agent.original',
  'http.target',
  'http.url',
  'http.client_ip',
  'http.user_agent',
  'http.host',
  'net.peer.ip',
  'net.peer.name',
  'net.peer.port',
  'net.host.name',
  'net.host.ip',
  'net.host.port',
  'messaging.kafka.message.key',
  'db.query.text',
  'db.statement',
  'enduser.id',
];

/** One view for every instrument: the attribute filter above, nothing else changed. */
export function heraldMetricViews(): ViewOptions[] {
  return [
    {
      instrumentName: '*',
      attributesProcessors: [createDenyListAttributesProcessor([...UNRECORDED_METRIC_ATTRIBUTES])],
    },
  ];
}

const require = createRequire(import.meta.url);

/** The OTLP metric exporter of the protocol asked for; each reads its own OTEL_EXPORTER_OTLP_* variables. */
function otlpMetricExporter(env: Env): PushMetricExporter {
  const protocol =
    (env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim() ||
    'http/protobuf';
  // Loaded only when used: the gRPC exporter alone brings in @grpc/grpc-js.
  const load = (name: string) =>
    (require(name) as { OTLPMetricExporter: new () => PushMetricExporter }).OTLPMetricExporter;
  if (protocol === 'grpc') return new (load('@opentelemetry/exporter-metrics-otlp-grpc'))();
  if (protocol === 'http/json') return new (load('@opentelemetry/exporter-metrics-otlp-http'))();
  if (protocol !== 'http/protobuf') {
    process.emitWarning(
      `OTEL_EXPORTER_OTLP_PROTOCOL: unsupported metrics protocol ${JSON.stringify(protocol)}; using http/protobuf`,
      'HeraldTelemetryWarning',
    );
  }
  return new (load('@opentelemetry/exporter-metrics-otlp-proto'))();
}

/**
 * The Prometheus endpoint: GET /metrics on its own port. A port it cannot take (already in use)
 * is reported as a warning and the service keeps serving; its operators see no metrics, not an
 * outage.
 */
function prometheusReader(endpoint: MetricsEndpoint): PrometheusExporter {
  return new PrometheusExporter(
    {
      host: endpoint.host,
      port: endpoint.port,
      endpoint: endpoint.path,
      // target_info would repeat the resource on every scrape, a random service.instance.id
      // included; Prometheus names its targets with its own labels (job, instance, pod).
      withoutTargetInfo: true,
    },
    (error) => {
      if (!error) return;
      process.emitWarning(
        `metrics: cannot serve Prometheus metrics on ${endpoint.host}:${endpoint.port}: ${error.message}`,
        'HeraldTelemetryWarning',
      );
    },
  );
}

/**
 * The metric readers of a process: the Prometheus endpoint when METRICS_PORT asks for one, and
 * when `otlp` (a metrics exporter or an OTLP endpoint was configured) the exporters
 * OTEL_METRICS_EXPORTER names, read as the SDK reads it: `otlp` (the default), `console`,
 * `prometheus` (the SDK's own endpoint, OTEL_EXPORTER_PROMETHEUS_*; ignored beside METRICS_PORT's),
 * `none`.
 */
export function metricReadersFor(
  env: Env,
  options: { prometheus?: MetricsEndpoint | undefined; otlp: boolean },
): IMetricReader[] {
  const readers: IMetricReader[] = [];
  if (options.prometheus) readers.push(prometheusReader(options.prometheus));
  if (!options.otlp) return readers;
  const { exporters, unknown } = requestedMetricExporters(env);
  if (unknown.length > 0) {
    process.emitWarning(
      `OTEL_METRICS_EXPORTER: ignoring ${unknown.join(', ')} (known: otlp, console, prometheus, none)`,
      'HeraldTelemetryWarning',
    );
  }
  const { intervalMs, timeoutMs } = metricExportTiming(env);
  const periodic = (exporter: PushMetricExporter) =>
    new PeriodicExportingMetricReader({
      exporter,
      exportIntervalMillis: intervalMs,
      exportTimeoutMillis: timeoutMs,
    });
  for (const name of exporters) {
    if (name === 'otlp') readers.push(periodic(otlpMetricExporter(env)));
    else if (name === 'console') readers.push(periodic(new ConsoleMetricExporter()));
    else if (!options.prometheus) readers.push(new PrometheusExporter());
  }
  return readers;
}
