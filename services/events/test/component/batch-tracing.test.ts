// The trace of a batch: the recorder writes the transactions of concurrent requests in one
// `db.transaction`. Its sampled requests all of one trace, it is a child of the first one's span
// (in a request, `events.write`) and links to each; of several traces, a root span linked to
// each; none sampled, no span. The recorder is driven directly, held so that the requests share
// a batch, each `record` called in its request's context; spans go to an in-memory exporter.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ROOT_CONTEXT, TraceFlags, context, trace, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createPool, type Pool } from '@herald/db';
import { TEST_POSTGRES_URL } from '@herald/testing';
import {
  RECEIVED_AT_PLACEHOLDER,
  type BatchRequest,
} from '../../src/recording/data/record-batch.js';
import { BatchHold, createRecorder, type Recorder } from '../../src/recording/recording-batcher.js';
import { prepareDatabase } from '../support.js';

const spans = new InMemorySpanExporter();
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const tracer = trace.getTracer('batch-tracing-test');

const DATABASE = 'herald_events_test_batch_tracing';
const OCCURRED = '2026-03-04T05:06:07.123Z';

let pool: Pool;
let hold: BatchHold;
let recorder: Recorder;

beforeAll(async () => {
  await prepareDatabase(DATABASE);
  pool = createPool({
    connectionString: `${TEST_POSTGRES_URL}/${DATABASE}`,
    applicationName: 'events-batch-tracing-test',
  });
  hold = new BatchHold();
  recorder = createRecorder(pool, { windowMs: 60_000, maxBatchEvents: 100, maxWaitMs: 5, hold });
});
afterAll(async () => {
  await pool.end();
  trace.disable();
  context.disable();
});
beforeEach(() => spans.reset());

/** One request's transaction: an Event about an organization (no Contact to lock). */
function transaction(): BatchRequest {
  const id = randomUUID();
  return {
    tenantId: randomUUID(),
    lockKeys: [],
    contacts: [],
    claims: [],
    events: [
      {
        row: {
          id,
          contactId: null,
          organizationExternalId: 'org-traced',
          eventName: 'traced',
          occurredAt: OCCURRED,
          dedupKey: null,
          properties: null,
        },
        dedupKeyHash: null,
        messageKey: id,
        messageValue: JSON.stringify({
          id,
          eventName: 'traced',
          receivedAt: RECEIVED_AT_PLACEHOLDER,
          properties: null,
        }),
      },
    ],
    headers: '{}',
  };
}

/** A request its caller did not sample. */
const unsampled = (): Span =>
  trace.wrapSpanContext({
    traceId: randomBytes(16).toString('hex'),
    spanId: randomBytes(8).toString('hex'),
    traceFlags: TraceFlags.NONE,
  });

/**
 * Records one transaction per request span, in that order, in one batch; the batch is let go
 * inside `releasedIn`'s span (a request of its own), which the batch must never take as its
 * parent. Every request must be recorded.
 */
async function inOneBatch(requests: readonly Span[]) {
  const releasedIn = tracer.startSpan('unrelated request');
  hold.hold();
  const answers = requests.map((span) =>
    context.with(trace.setSpan(ROOT_CONTEXT, span), () => recorder.record(transaction())),
  );
  expect(hold.waiting()).toBe(requests.length);
  context.with(trace.setSpan(ROOT_CONTEXT, releasedIn), () => hold.release());
  const outcomes = await Promise.all(answers);
  releasedIn.end();
  expect(outcomes.map((o) => o.status)).toEqual(requests.map(() => 'recorded'));
  return spans.getFinishedSpans().filter((s) => s.name === 'db.transaction');
}

describe('the span of a batch', () => {
  it('when the sampled requests of a batch are all of one trace, then its db.transaction is a child of the first one’s span and links to each', async () => {
    const request = tracer.startSpan('request');
    const write = tracer.startSpan('events.write', {}, trace.setSpan(ROOT_CONTEXT, request));
    const again = tracer.startSpan('events.write', {}, trace.setSpan(ROOT_CONTEXT, request));

    const [batch, ...more] = await inOneBatch([unsampled(), write, unsampled(), again]);
    write.end();
    again.end();
    request.end();

    expect(more).toEqual([]);
    expect(batch!.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(batch!.parentSpanContext?.spanId).toBe(write.spanContext().spanId);
    expect(batch!.links.map((l) => l.context.spanId)).toEqual([
      write.spanContext().spanId,
      again.spanContext().spanId,
    ]);
    expect(batch!.attributes).toMatchObject({ 'db.system.name': 'postgresql' });
  });

  it('when the sampled requests of a batch are of several traces, then its db.transaction is a root span linked to each', async () => {
    const a = tracer.startSpan('events.write A');
    const b = tracer.startSpan('events.write B');

    const [batch, ...more] = await inOneBatch([a, unsampled(), b]);
    a.end();
    b.end();

    expect(more).toEqual([]);
    expect(batch!.parentSpanContext).toBeUndefined();
    expect([a, b].map((s) => s.spanContext().traceId)).not.toContain(batch!.spanContext().traceId);
    expect(batch!.links.map((l) => l.context.spanId)).toEqual([
      a.spanContext().spanId,
      b.spanContext().spanId,
    ]);
  });

  it('when no request of a batch was sampled, then no span is recorded for it', async () => {
    expect(await inOneBatch([unsampled(), unsampled()])).toEqual([]);
  });

  it('when a request is recorded alone, then its db.transaction is a child of its span', async () => {
    const write = tracer.startSpan('events.write');
    const [batch, ...more] = await inOneBatch([write]);
    write.end();

    expect(more).toEqual([]);
    expect(batch!.parentSpanContext?.spanId).toBe(write.spanContext().spanId);
  });
});
