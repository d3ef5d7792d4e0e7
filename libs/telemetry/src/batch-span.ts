import type { Link, SpanContext } from '@opentelemetry/api';

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
