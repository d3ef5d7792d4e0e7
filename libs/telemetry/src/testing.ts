import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';

/**
 * A metric reader for tests: `collect()` returns what the SDK would export, and nothing is sent
 * anywhere.
 */
export class InMemoryMetricReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Registers a global MeterProvider whose only reader is a new InMemoryMetricReader, and returns
 * the reader. Call it before building what makes instruments: they come from the provider
 * registered at that moment, as the telemetry preload registers the SDK's before a service starts.
 */
export function installTestMetricReader(): InMemoryMetricReader {
  const reader = new InMemoryMetricReader();
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  return reader;
}
