// A traced Kafka send gives each message a producer span and writes that span's context into the
// message's headers; a message marked with keepOwnTraceContext leaves with the context it was
// stored with. Run through the kafkajs instrumentation's own producer-span step, with the SDK
// started in-process.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import type { KafkaJsInstrumentation } from '@opentelemetry/instrumentation-kafkajs';
import { heraldInstrumentations } from '../src/instrumentations.js';
import {
  context,
  keepOwnTraceContext,
  shutdownTelemetry,
  startTelemetry,
  trace,
} from '../src/index.js';

const memory = new InMemorySpanExporter();
let kafkajs: KafkaJsInstrumentation;

beforeAll(() => {
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
afterAll(() => shutdownTelemetry());

const STORED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

/** What the instrumentation does to one message of a send made inside `parent`'s span. */
function sendInSpan(headers: Record<string, unknown> | undefined) {
  const message = { key: 'k', value: 'v', headers };
  const parent = trace.getTracer('test').startSpan('outbox publish');
  const producer = context.with(trace.setSpan(context.active(), parent), () =>
    (
      kafkajs as unknown as {
        _startProducerSpan(
          topic: string,
          m: typeof message,
          client: unknown,
        ): { end(): void; spanContext(): { traceId: string } };
      }
    )._startProducerSpan('topic', message, {}),
  );
  producer.end();
  parent.end();
  return { headers: message.headers!, traceId: parent.spanContext().traceId };
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
});
