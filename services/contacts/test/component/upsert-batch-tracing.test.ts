// The trace context an upsert's outbox message carries when upserts share a batch: the batch's
// transaction when the batch is of the request's trace (as for an upsert alone), else the
// request's own span, so that no message continues another request's trace. Spans go to an
// in-memory exporter; the upserts are held so that they share a batch.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { BatchHold } from '@herald/db';
import { contactUpserts } from '../../src/domain/contacts.js';
import { startContactsService, uniqueEmail, type TestContactsService } from '../support.js';

const spans = new InMemorySpanExporter();
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const tracer = trace.getTracer('upsert-batch-tracing-test');

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService();
});
afterAll(async () => {
  await svc.close();
  trace.disable();
  context.disable();
});
beforeEach(() => spans.reset());

/** The traceparent of each Contact's message, by externalId. */
async function traceparents(tenantId: string): Promise<Record<string, string>> {
  const { rows } = await svc.pool.query<{ external_id: string; traceparent: string }>(
    `select value::jsonb -> 'contact' ->> 'externalId' as external_id,
            headers ->> 'traceparent' as traceparent
     from outbox where value::jsonb ->> 'tenantId' = $1`,
    [tenantId],
  );
  return Object.fromEntries(rows.map((r) => [r.external_id, r.traceparent]));
}

/** Upserts `externalIds` in one held batch, each inside the span `spanFor` starts for it. */
async function upsertInSpans(
  tenantId: string,
  externalIds: string[],
  spanFor: (externalId: string, run: () => Promise<unknown>) => Promise<unknown>,
) {
  const hold = new BatchHold();
  const upserts = contactUpserts(svc.pool, { hold });
  hold.hold();
  const done = Promise.all(
    externalIds.map((externalId) =>
      spanFor(externalId, () =>
        upserts.byExternalId(tenantId, externalId, { email: uniqueEmail() }),
      ),
    ),
  );
  expect(hold.waiting()).toBe(externalIds.length);
  hold.release();
  await done;
}

describe('the trace context of messages written in one batch', () => {
  it('when the batched upserts are of two traces, then each message carries its own request span', async () => {
    const { tenantId } = svc.newTenant();
    const requestSpans: Record<string, { traceId: string; spanId: string }> = {};
    await upsertInSpans(tenantId, ['a', 'b'], (externalId, run) =>
      tracer.startActiveSpan(`request ${externalId}`, { root: true }, async (span) => {
        requestSpans[externalId] = span.spanContext();
        try {
          return await run();
        } finally {
          span.end();
        }
      }),
    );

    const parents = await traceparents(tenantId);
    for (const externalId of ['a', 'b']) {
      const { traceId, spanId } = requestSpans[externalId]!;
      expect(parents[externalId]).toBe(`00-${traceId}-${spanId}-01`);
    }
    expect(requestSpans.a!.traceId).not.toBe(requestSpans.b!.traceId);
  });

  it('when the batched upserts are of one trace, then their messages carry the batch transaction', async () => {
    const { tenantId } = svc.newTenant();
    await tracer.startActiveSpan('caller', { root: true }, async (caller) => {
      await upsertInSpans(tenantId, ['c', 'd'], (externalId, run) =>
        tracer.startActiveSpan(`request ${externalId}`, async (span) => {
          try {
            return await run();
          } finally {
            span.end();
          }
        }),
      );
      caller.end();
    });

    const transactions = spans.getFinishedSpans().filter((s) => s.name === 'db.transaction');
    expect(transactions).toHaveLength(1);
    const { traceId, spanId } = transactions[0]!.spanContext();
    const parents = await traceparents(tenantId);
    expect(parents).toEqual({ c: `00-${traceId}-${spanId}-01`, d: `00-${traceId}-${spanId}-01` });
  });
});
