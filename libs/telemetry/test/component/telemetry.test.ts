// In-process: the SDK started by startTelemetry with an in-memory exporter. Module patching
// (http, express, pino, ...) cannot work inside jest, whose module registry bypasses Node's
// require and loader hooks; that is covered by register.test.ts in a real Node process. What
// works here is everything that does not patch modules: manual spans, metrics, and fetch,
// which the undici instrumentation observes through the process-wide diagnostics_channel.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { ROOT_CONTEXT, createTraceState, defaultTextMapGetter } from '@opentelemetry/api';
import { core, metrics as sdkMetrics } from '@opentelemetry/sdk-node';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  SpanKind,
  SpanStatusCode,
  context,
  messageTraceHeaders,
  meter,
  propagation,
  shutdownTelemetry,
  startTelemetry,
  trace,
  withSpan,
  type Telemetry,
} from '../../src/index.js';

class TestMetricReader extends sdkMetrics.MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const memory = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor({ exporter: memory });
/** Finished spans, once exported: the resource's async host.id makes export wait a tick. */
async function finished() {
  await processor.forceFlush();
  return memory.getFinishedSpans();
}
const reader = new TestMetricReader();
let telemetry: Telemetry;

// A second service, as seen from the one under test: it records what arrives.
const received: http.IncomingHttpHeaders[] = [];
const downstream = http.createServer((req, res) => {
  received.push(req.headers);
  res.end('ok');
});
let downstreamUrl: string;

beforeAll(async () => {
  telemetry = startTelemetry({
    serviceName: 'telemetry-test',
    serviceVersion: '9.9.9',
    spanProcessors: [processor],
    metricReaders: [reader],
  });
  await new Promise<void>((resolve) => downstream.listen(0, '127.0.0.1', resolve));
  downstreamUrl = `http://127.0.0.1:${(downstream.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await shutdownTelemetry();
  await new Promise((resolve) => downstream.close(resolve));
});

beforeEach(() => {
  memory.reset();
  received.length = 0;
});

describe('startTelemetry', () => {
  it('when called again, then it returns the running handle instead of a second SDK', () => {
    expect(telemetry.enabled).toBe(true);
    expect(startTelemetry({ serviceName: 'other' })).toBe(telemetry);
  });
});

describe('withSpan', () => {
  it('when the function resolves, then its value is returned and an OK span carries the service resource', async () => {
    const value = await withSpan('contacts.merge', { 'herald.contact_count': 3 }, () => 42);
    expect(value).toBe(42);
    const [span] = await finished();
    expect(span?.name).toBe('contacts.merge');
    expect(span?.attributes).toEqual({ 'herald.contact_count': 3 });
    expect(span?.status.code).toBe(SpanStatusCode.UNSET);
    expect(span?.resource.attributes['service.name']).toBe('telemetry-test');
    expect(span?.resource.attributes['service.version']).toBe('9.9.9');
  });

  it('when the function throws, then the span has an ERROR status and the exception, and the error is rethrown', async () => {
    await expect(
      withSpan('events.record', {}, () => {
        throw new TypeError('broker refused the batch');
      }),
    ).rejects.toThrow('broker refused the batch');
    const [span] = await finished();
    expect(span?.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'broker refused the batch',
    });
    const exception = span?.events.find((event) => event.name === 'exception');
    expect(exception?.attributes?.['exception.type']).toBe('TypeError');
  });

  it('when the function rejects with a non-Error, then the span still ends with an ERROR status', async () => {
    await expect(withSpan('x', {}, () => Promise.reject(new Error('late')))).rejects.toThrow();
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the point of the test
    await expect(withSpan('y', {}, () => Promise.reject('plain string'))).rejects.toBe(
      'plain string',
    );
    expect((await finished()).map((s) => s.status.code)).toEqual([
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
    ]);
  });

  it('when spans nest, then the inner span is a child of the outer one and sees it as active', async () => {
    await withSpan('outer', {}, async (outer) => {
      await withSpan('inner', {}, (inner) => {
        expect(trace.getActiveSpan()).toBe(inner);
        expect(inner.spanContext().traceId).toBe(outer.spanContext().traceId);
      });
    });
    const [inner, outer] = await finished();
    expect(inner?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
  });
});

describe('fetch between services', () => {
  it('when a handler calls another service with fetch, then the request carries a traceparent of the same trace', async () => {
    const handlerSpan = await withSpan('handle', {}, async (span) => {
      const response = await fetch(`${downstreamUrl}/stock`);
      await response.text();
      return span.spanContext();
    });

    const traceparent = received[0]?.traceparent;
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, parentId] = String(traceparent).split('-');
    expect(traceId).toBe(handlerSpan.traceId);

    const client = (await finished()).find((s) => s.kind === SpanKind.CLIENT);
    expect(client?.instrumentationScope.name).toBe('@opentelemetry/instrumentation-undici');
    expect(client?.parentSpanContext?.spanId).toBe(handlerSpan.spanId);
    // The downstream service's server span will hang under this client span.
    expect(parentId).toBe(client?.spanContext().spanId);
  });
});

describe('trace context', () => {
  const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const baggage = 'email=jane.doe%40example.com,plan=gold';

  it('when a request arrives with baggage, then it is neither read nor sent on', () => {
    const incoming = propagation.extract(ROOT_CONTEXT, { traceparent, baggage });
    expect(trace.getSpanContext(incoming)?.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(propagation.getBaggage(incoming)).toBeUndefined();

    const withBaggage = propagation.setBaggage(
      incoming,
      propagation.createBaggage({ email: { value: 'jane.doe@example.com' } }),
    );
    const outgoing: Record<string, string> = {};
    propagation.inject(withBaggage, outgoing);
    expect(outgoing).toEqual({ traceparent });
  });

  it('when the context holds baggage and an oversized tracestate, then a message gets the traceparent alone', () => {
    // As a propagator that accepts baggage (OTEL_PROPAGATORS=tracecontext,baggage) reads a caller.
    const lenient = new core.CompositePropagator({
      propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
    });
    const incoming = lenient.extract(ROOT_CONTEXT, { traceparent, baggage }, defaultTextMapGetter);
    expect(propagation.getBaggage(incoming)?.getEntry('email')).toBeDefined();
    const spanContext = trace.getSpanContext(incoming)!;
    const oversized = trace.setSpanContext(incoming, {
      ...spanContext,
      traceState: createTraceState().set('vendor', 'x'.repeat(600)),
    });
    expect(messageTraceHeaders(oversized)).toEqual({ traceparent });

    const small = trace.setSpanContext(incoming, {
      ...spanContext,
      traceState: createTraceState('vendor=abc'),
    });
    expect(messageTraceHeaders(small)).toEqual({ traceparent, tracestate: 'vendor=abc' });
  });

  it('when no trace is active, then a message gets no trace headers', () => {
    expect(context.with(ROOT_CONTEXT, () => messageTraceHeaders())).toEqual({});
  });
});

describe('meter', () => {
  it('when a counter with a unit is added to, then the reader collects it under the meter', async () => {
    const accepted = meter('herald.ingress').createCounter('events.accepted', {
      unit: '{event}',
      description: 'Events accepted for recording',
    });
    accepted.add(3, { 'event.source': 'api' });
    accepted.add(2, { 'event.source': 'api' });

    const { resourceMetrics } = await reader.collect();
    const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'herald.ingress');
    const metric = scope?.metrics.find((m) => m.descriptor.name === 'events.accepted');
    expect(metric?.descriptor.unit).toBe('{event}');
    expect(metric?.dataPoints[0]?.value).toBe(5);
    expect(metric?.dataPoints[0]?.attributes).toEqual({ 'event.source': 'api' });
    expect(resourceMetrics.resource.attributes['service.name']).toBe('telemetry-test');
  });
});
