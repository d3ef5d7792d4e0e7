// A traced Kafka send gives each message a producer span and writes that span's context into the
// message's headers; a message marked with keepOwnTraceContext leaves with the context it was
// stored with, and one that withSampledMessages does not name gets no recorded span. Run through
// the kafkajs instrumentation's own producer-span step, with the SDK started in-process and
// sampling parent-based, as Herald's services are deployed.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import type { KafkaJsInstrumentation } from '@opentelemetry/instrumentation-kafkajs';
import { heraldInstrumentations } from '../../src/instrumentations.js';
import {
  context,
  keepOwnTraceContext,
  shutdownTelemetry,
  startTelemetry,
  trace,
  withSampledMessages,
} from '../../src/index.js';

const memory = new InMemorySpanExporter();
let kafkajs: KafkaJsInstrumentation;

beforeAll(() => {
  process.env.OTEL_TRACES_SAMPLER = 'parentbased_always_on';
  startTelemetry({
    serviceName: 'message-trace-test',
    spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
  });
  const all = heraldInstrumentations({ sendLogs: false });
  // Constructing enables them (patching hooks, diagnostics channels that outlive this file in
  // the worker); the producer-span step below runs without any of them enabled.
  for (const instrumentation of all) instrumentation.disable();
  kafkajs = all.find(
    (i) => i.instrumentationName === '@opentelemetry/instrumentation-kafkajs',
  ) as KafkaJsInstrumentation;
});
afterAll(async () => {
  await shutdownTelemetry();
  delete process.env.OTEL_TRACES_SAMPLER;
});

const STORED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

/**
 * What the instrumentation does to one message (key `k` on `topic`) of a send made inside
 * `parent`'s span; `sampled` names the messages of sampled requests, as the outbox relay does.
 */
function sendInSpan(
  headers: Record<string, unknown> | undefined,
  sampled?: Array<{ topic: string; key: string }>,
) {
  const message = { key: 'k', value: 'v', headers };
  const parent = trace.getTracer('test').startSpan('outbox publish');
  let inSend = trace.setSpan(context.active(), parent);
  if (sampled) inSend = withSampledMessages(inSend, sampled);
  const producer = context.with(inSend, () =>
    (
      kafkajs as unknown as {
        _startProducerSpan(
          topic: string,
          m: typeof message,
          client: unknown,
        ): { end(): void; isRecording(): boolean };
      }
    )._startProducerSpan('topic', message, {}),
  );
  const recorded = producer.isRecording();
  producer.end();
  parent.end();
  return { headers: message.headers!, traceId: parent.spanContext().traceId, recorded };
}

describe('a traced send', () => {
  it('when a message is not marked, then it carries the producer span of the send', () => {
    const { headers, traceId } = sendInSpan({ traceparent: STORED });
    expect(headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });

  it('when a message is marked, then it keeps the traceparent and tracestate it was stored with', () => {
    const stored = { traceparent: STORED, tracestate: 'vendor=1' };
    keepOwnTraceContext(stored);
    const { headers } = sendInSpan(stored);
    expect(headers).toEqual({ traceparent: STORED, tracestate: 'vendor=1' });
  });

  it('when a marked message had no trace context, then it leaves with none', () => {
    const none: Record<string, unknown> = { other: 'x' };
    keepOwnTraceContext(none);
    const { headers } = sendInSpan(none);
    expect(headers).toEqual({ other: 'x' });
  });

  it('when the send names the messages of sampled requests, then only those get a recorded producer span, and the others keep their own context', () => {
    const named = sendInSpan({ traceparent: STORED }, [{ topic: 'topic', key: 'k' }]);
    expect(named.recorded).toBe(true);
    expect(named.headers.traceparent).toMatch(new RegExp(`^00-${named.traceId}-[0-9a-f]{16}-01$`));

    const stored = { traceparent: STORED };
    keepOwnTraceContext(stored);
    const other = sendInSpan(stored, [
      { topic: 'topic', key: 'another key' },
      { topic: 'another topic', key: 'k' },
    ]);
    expect(other.recorded).toBe(false);
    expect(other.headers).toEqual({ traceparent: STORED });
  });
});
