import { describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  isTelemetryDisabled,
  isUntracedPath,
  metricExportTiming,
  metricsEndpoint,
  requestedMetricExporters,
  TelemetrySettingError,
  requestedClientSpans,
  resolveServiceIdentity,
  serviceNameFromPackage,
  unrequestedSignals,
} from '../../src/settings.js';

describe('unrequestedSignals', () => {
  it('when no exporter or OTLP endpoint is configured, then traces, metrics and logs are all off', () => {
    expect(unrequestedSignals({})).toEqual(['traces', 'metrics', 'logs']);
  });

  it('when OTEL_EXPORTER_OTLP_ENDPOINT is set, then traces and metrics are left to the SDK', () => {
    expect(unrequestedSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual([
      'logs',
    ]);
  });

  it('when only a signal-specific endpoint is set, then only that signal is left to the SDK', () => {
    expect(
      unrequestedSignals({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }),
    ).toEqual(['metrics', 'logs']);
    expect(
      unrequestedSignals({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://c:4318/v1/metrics' }),
    ).toEqual(['traces', 'logs']);
  });

  it('when an exporter is named explicitly, then the SDK handles it even without an endpoint', () => {
    expect(
      unrequestedSignals({
        OTEL_TRACES_EXPORTER: 'console',
        OTEL_METRICS_EXPORTER: 'prometheus',
        OTEL_LOGS_EXPORTER: 'otlp',
      }),
    ).toEqual([]);
  });

  it('when a variable is set but blank, then it counts as unset', () => {
    expect(
      unrequestedSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ', OTEL_TRACES_EXPORTER: '' }),
    ).toEqual(['traces', 'metrics', 'logs']);
  });
});

describe('isTelemetryDisabled', () => {
  it('when OTEL_SDK_DISABLED is true in any case, then telemetry is disabled', () => {
    expect(isTelemetryDisabled({ OTEL_SDK_DISABLED: 'true' })).toBe(true);
    expect(isTelemetryDisabled({ OTEL_SDK_DISABLED: ' TRUE ' })).toBe(true);
  });

  it('when OTEL_SDK_DISABLED is unset or anything else, then telemetry is enabled', () => {
    expect(isTelemetryDisabled({})).toBe(false);
    expect(isTelemetryDisabled({ OTEL_SDK_DISABLED: 'false' })).toBe(false);
    expect(isTelemetryDisabled({ OTEL_SDK_DISABLED: '1' })).toBe(false);
  });
});

describe('resolveServiceIdentity', () => {
  function serviceDir(pkg: object): string {
    const root = mkdtempSync(path.join(tmpdir(), 'herald-telemetry-'));
    mkdirSync(path.join(root, 'dist'));
    writeFileSync(path.join(root, 'package.json'), JSON.stringify(pkg));
    writeFileSync(path.join(root, 'dist', 'index.js'), '');
    return root;
  }

  it("when nothing is given, then the entry script's package.json names and versions the service", () => {
    const root = serviceDir({ name: '@herald/auth', version: '1.4.2' });
    expect(resolveServiceIdentity({}, {}, path.join(root, 'dist', 'index.js'), tmpdir())).toEqual({
      explicitName: undefined,
      fallbackName: 'herald-auth',
      version: '1.4.2',
    });
  });

  it('when the code passes a name and version, then they win over the package.json', () => {
    const root = serviceDir({ name: '@herald/auth', version: '1.4.2' });
    const identity = resolveServiceIdentity(
      { serviceName: 'auth', serviceVersion: '2.0.0' },
      { npm_package_version: '3.0.0' },
      path.join(root, 'dist', 'index.js'),
    );
    expect(identity.explicitName).toBe('auth');
    expect(identity.version).toBe('2.0.0');
  });

  it('when no package.json is found, then npm_package_name and npm_package_version stand in', () => {
    const identity = resolveServiceIdentity(
      {},
      { npm_package_name: '@herald/ingress', npm_package_version: '0.3.0' },
      '/node_modules/bundled/index.js',
      '/',
    );
    expect(identity).toEqual({
      explicitName: undefined,
      fallbackName: 'herald-ingress',
      version: '0.3.0',
    });
  });

  it('when the entry is a runner inside node_modules, then the working directory is used', () => {
    const root = serviceDir({ name: 'svc', version: '0.0.1' });
    const runner = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
    mkdirSync(path.dirname(runner), { recursive: true });
    writeFileSync(path.join(root, 'node_modules', 'jest', 'package.json'), '{"name":"jest"}');
    writeFileSync(runner, '');
    expect(resolveServiceIdentity({}, {}, runner, root).fallbackName).toBe('svc');
  });

  it('when a scoped package name is turned into a service name, then it has no @ or /', () => {
    expect(serviceNameFromPackage('@herald/auth')).toBe('herald-auth');
    expect(serviceNameFromPackage('plain')).toBe('plain');
  });
});

describe('isUntracedPath', () => {
  it('when the path is a health probe, with or without a query or trailing slash, then it is untraced', () => {
    expect(isUntracedPath('/healthz')).toBe(true);
    expect(isUntracedPath('/readyz?verbose=1')).toBe(true);
    expect(isUntracedPath('/healthz/')).toBe(true);
  });

  it('when the path is anything else, then it is traced', () => {
    expect(isUntracedPath('/v1/events')).toBe(false);
    expect(isUntracedPath('/healthz/deep')).toBe(false);
    expect(isUntracedPath('/')).toBe(false);
    expect(isUntracedPath(undefined)).toBe(false);
  });
});

describe('requestedClientSpans', () => {
  it('when HERALD_OTEL_CLIENT_SPANS is unset or blank, then no database client gets spans', () => {
    expect(requestedClientSpans({})).toEqual({ spans: [], unknown: [] });
    expect(requestedClientSpans({ HERALD_OTEL_CLIENT_SPANS: ' ' })).toEqual({
      spans: [],
      unknown: [],
    });
  });

  it('when it names clients, then those get spans; all means both; unknown names are reported', () => {
    expect(requestedClientSpans({ HERALD_OTEL_CLIENT_SPANS: 'redis' }).spans).toEqual(['redis']);
    expect(requestedClientSpans({ HERALD_OTEL_CLIENT_SPANS: ' Redis , pg ' }).spans).toEqual([
      'pg',
      'redis',
    ]);
    expect(requestedClientSpans({ HERALD_OTEL_CLIENT_SPANS: 'all' }).spans).toEqual([
      'pg',
      'redis',
    ]);
    expect(requestedClientSpans({ HERALD_OTEL_CLIENT_SPANS: 'pg,mysql' })).toEqual({
      spans: ['pg'],
      unknown: ['mysql'],
    });
  });
});

describe('metricsEndpoint', () => {
  it('when METRICS_PORT is unset or blank, then no Prometheus endpoint is opened', () => {
    expect(metricsEndpoint({})).toBeUndefined();
    expect(metricsEndpoint({ METRICS_PORT: '  ' })).toBeUndefined();
  });

  it('when METRICS_PORT is a port, then /metrics listens there on HOST (loopback without it)', () => {
    expect(metricsEndpoint({ METRICS_PORT: '9464', HOST: '0.0.0.0', PORT: '8080' })).toEqual({
      host: '0.0.0.0',
      port: 9464,
      path: '/metrics',
    });
    expect(metricsEndpoint({ METRICS_PORT: ' 19083 ' })).toEqual({
      host: '127.0.0.1',
      port: 19083,
      path: '/metrics',
    });
  });

  it.each(['0', '65536', '94.64', '-1', 'abc', '9464x', '1e3'])(
    'when METRICS_PORT is %s, then the process refuses to start, naming it',
    (value) => {
      expect(() => metricsEndpoint({ METRICS_PORT: value })).toThrow(TelemetrySettingError);
      expect(() => metricsEndpoint({ METRICS_PORT: value })).toThrow(/^METRICS_PORT: /);
    },
  );

  it('when METRICS_PORT is the service port, then the process refuses to start', () => {
    expect(() => metricsEndpoint({ METRICS_PORT: '8080', PORT: '8080' })).toThrow(
      'METRICS_PORT: must differ from PORT (8080)',
    );
  });
});

describe('requestedMetricExporters', () => {
  it('when OTEL_METRICS_EXPORTER is unset, then otlp, as the SDK defaults', () => {
    expect(requestedMetricExporters({})).toEqual({ exporters: ['otlp'], unknown: [] });
  });

  it('when it names several, in any case, then each once; none wins; unknown names are reported', () => {
    expect(
      requestedMetricExporters({ OTEL_METRICS_EXPORTER: 'OTLP, console,otlp,zipkin' }),
    ).toEqual({ exporters: ['otlp', 'console'], unknown: ['zipkin'] });
    expect(requestedMetricExporters({ OTEL_METRICS_EXPORTER: 'otlp,none' })).toEqual({
      exporters: [],
      unknown: [],
    });
  });
});

describe('metricExportTiming', () => {
  it('when unset, then every 60 s with a 30 s timeout; a timeout above the interval is cut to it', () => {
    expect(metricExportTiming({})).toEqual({ intervalMs: 60_000, timeoutMs: 30_000 });
    expect(metricExportTiming({ OTEL_METRIC_EXPORT_INTERVAL: '10000' })).toEqual({
      intervalMs: 10_000,
      timeoutMs: 10_000,
    });
    expect(
      metricExportTiming({
        OTEL_METRIC_EXPORT_INTERVAL: 'soon',
        OTEL_METRIC_EXPORT_TIMEOUT: '500',
      }),
    ).toEqual({ intervalMs: 60_000, timeoutMs: 500 });
  });
});
