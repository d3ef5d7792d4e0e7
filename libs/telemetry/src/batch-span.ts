import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  context,
  propagation,
  trace,
  type Attributes,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';

/** Links a batch span carries at most (the SDK's default span link limit). */
const MAX_LINKS = 128;

/**
 * Where a span doing the work of several requests goes, as OpenTelemetry's messaging conventions
 * trace a batch: it links to each sampled request (`origins`, distinct, in order; the first 128),
 * and it is a child of the first when they are all of one trace (`parent`), so that a request's
 * trace goes on through it; of several traces, it is a root span. Undefined when no request was
 * sampled: no span is made.
 */
export function batchSpanPlacement(
  origins: readonly SpanContext[],
): { links: Link[]; parent: SpanContext | undefined } | undefined {
  const first = origins[0];
  if (first === undefined) return undefined;
  return {
    links: origins.slice(0, MAX_LINKS).map((context) => ({ context })),
    parent: origins.every((o) => o.traceId === first.traceId) ? first : undefined,
  };
}

/**
 * Runs `fn`, the processing of a batch of consumed messages, inside a consumer span (`name`)
 * placed by batchSpanPlacement from the sampled trace contexts the messages carry (their
 * `traceparent` and `tracestate` headers): a consumer's work goes on in the traces of the
 * requests that caused the messages. Without a sampled message, no span is made.
 */
export function withConsumedBatchSpan<T>(
  tracerName: string,
  name: string,
  headers: readonly ReadonlyMap<string, string>[],
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  const origins: SpanContext[] = [];
  const seen = new Set<string>();
  for (const carrier of headers) {
    const traceparent = carrier.get('traceparent');
    if (traceparent === undefined || seen.has(traceparent)) continue;
    seen.add(traceparent);
    const origin = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, carrier, mapGetter));
    if (origin && trace.isSpanContextValid(origin) && origin.traceFlags & TraceFlags.SAMPLED) {
      origins.push(origin);
    }
  }
  const placement = batchSpanPlacement(origins);
  if (placement === undefined) return fn();
  const { links, parent } = placement;
  const active = context.active();
  return trace.getTracer(tracerName).startActiveSpan(
    name,
    {
      kind: SpanKind.CONSUMER,
      root: parent === undefined,
      links,
      attributes: { 'messaging.batch.message_count': headers.length, ...attributes },
    },
    parent ? trace.setSpanContext(active, parent) : active,
    async (span) => {
      try {
        return await fn();
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

const mapGetter = {
  get: (carrier: ReadonlyMap<string, string>, key: string) => carrier.get(key),
  keys: (carrier: ReadonlyMap<string, string>) => [...carrier.keys()],
};
