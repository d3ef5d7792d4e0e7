import { describe, expect, it } from '@jest/globals';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { InMemoryMetricReader } from '../../src/testing.js';
import { heraldMetricViews, UNRECORDED_METRIC_ATTRIBUTES } from '../../src/metrics.js';

describe('heraldMetricViews', () => {
  it('when an instrumentation records a raw path, an address or a user agent, then no metric keeps them, while the route pattern, method, status and histogram buckets stay', async () => {
    const reader = new InMemoryMetricReader();
    const provider = new MeterProvider({ readers: [reader], views: heraldMetricViews() });
    const histogram = provider
      .getMeter('@opentelemetry/instrumentation-http')
      .createHistogram('http.server.request.duration', {
        unit: 's',
        advice: { explicitBucketBoundaries: [0.1, 1] },
      });
    histogram.record(0.5, {
      'http.route': '/v1/contacts/:externalId',
      'http.request.method': 'PUT',
      'http.response.status_code': 201,
      'url.path': '/v1/contacts/jane@example.com',
      'url.query': 'email=jane@example.com',
      'client.address': '203.0.113.7',
      'server.address': '10.0.0.3',
      'network.peer.address': '10.0.0.9',
      'user_agent.original': 'curl/8',
    });
    provider
      .getMeter('a-kafka-instrumentation')
      .createCounter('messaging.client.sent.messages')
      .add(1, {
        'messaging.destination.name': 'herald.events.recorded',
        'messaging.kafka.message.key': 'contact-1',
      });

    const { resourceMetrics } = await reader.collect();
    const metrics = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const http = metrics.find((m) => m.descriptor.name === 'http.server.request.duration')!;
    expect(http.dataPoints[0]!.attributes).toEqual({
      'http.route': '/v1/contacts/:externalId',
      'http.request.method': 'PUT',
      'http.response.status_code': 201,
    });
    expect(
      (http.dataPoints[0]!.value as { buckets: { boundaries: number[] } }).buckets.boundaries,
    ).toEqual([0.1, 1]);
    const sent = metrics.find((m) => m.descriptor.name === 'messaging.client.sent.messages')!;
    expect(sent.dataPoints[0]!.attributes).toEqual({
      'messaging.destination.name': 'herald.events.recorded',
    });
    expect(JSON.stringify(metrics)).not.toMatch(/jane|203\.0\.113|10\.0\.0|curl|contact-1/);
    await provider.shutdown();
  });

  it('when the list is read, then it holds the addresses, paths and keys of the current and older conventions', () => {
    for (const name of [
      'url.path',
      'url.query',
      'url.full',
      'client.address',
      'server.address',
      'http.target',
      'net.peer.ip',
      'messaging.kafka.message.key',
    ]) {
      expect(UNRECORDED_METRIC_ATTRIBUTES).toContain(name);
    }
  });
});
