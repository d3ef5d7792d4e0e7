// A consumer's batch span: under the request its sampled messages came from, linked to each,
// none when no message was sampled. An in-memory exporter, the W3C propagator.
import { afterAll, describe, expect, it } from '@jest/globals';
import { SpanKind, context, propagation, trace } from '@opentelemetry/api';
import { node, tracing } from '@opentelemetry/sdk-node';
import { withConsumedBatchSpan } from '../../src/index.js';

// The SDK's Node provider: an async-hooks context manager and the W3C propagator.
const spans = new tracing.InMemorySpanExporter();
new node.NodeTracerProvider({
  spanProcessors: [new tracing.SimpleSpanProcessor(spans)],
}).register();
afterAll(() => {
  trace.disable();
  propagation.disable();
  context.disable();
});

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const headers = (traceparent?: string) =>
  new Map(traceparent === undefined ? [] : [['traceparent', traceparent]]);

describe('withConsumedBatchSpan', () => {
  it('when messages of one sampled request are among others, then one consumer span is under it, linked to it, and the work runs inside', async () => {
    spans.reset();
    const inside = await withConsumedBatchSpan(
      'test',
      'process things',
      [
        headers(`00-${TRACE}-b7ad6b7169203331-01`),
        headers(`00-${TRACE}-b7ad6b7169203331-01`),
        headers(`00-${'1'.repeat(32)}-${'2'.repeat(16)}-00`),
        headers(),
      ],
      { 'messaging.system': 'kafka' },
      () => Promise.resolve(trace.getActiveSpan()?.spanContext().spanId),
    );
    const [span] = spans.getFinishedSpans();
    expect(span?.name).toBe('process things');
    expect(span?.kind).toBe(SpanKind.CONSUMER);
    expect(span?.spanContext().traceId).toBe(TRACE);
    expect(span?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(span?.links.map((l) => l.context.spanId)).toEqual(['b7ad6b7169203331']);
    expect(span?.attributes).toEqual({
      'messaging.batch.message_count': 4,
      'messaging.system': 'kafka',
    });
    expect(inside).toBe(span?.spanContext().spanId);
  });

  it('when no message was sampled, then no span is made and the work still runs', async () => {
    spans.reset();
    const result = await withConsumedBatchSpan(
      'test',
      'process things',
      [headers(`00-${TRACE}-b7ad6b7169203331-00`), headers()],
      {},
      () => Promise.resolve('done'),
    );
    expect(result).toBe('done');
    expect(spans.getFinishedSpans()).toEqual([]);
  });
});
