// Where a span doing the work of several requests goes: linked to each, under the first when all
// are of one trace, at the root when of several, nowhere when none was sampled.
import { describe, expect, it } from '@jest/globals';
import { TraceFlags, type SpanContext } from '@opentelemetry/api';
import { batchSpanPlacement } from '../../src/index.js';

const span = (traceId: string, spanId: string): SpanContext => ({
  traceId: traceId.repeat(32).slice(0, 32),
  spanId: spanId.repeat(16).slice(0, 16),
  traceFlags: TraceFlags.SAMPLED,
});

describe('batchSpanPlacement', () => {
  it('when no request was sampled, then there is no span', () => {
    expect(batchSpanPlacement([])).toBeUndefined();
  });

  it('when every request is of one trace, then the span is under the first and links to each', () => {
    const origins = [span('a', '1'), span('a', '2')];
    expect(batchSpanPlacement(origins)).toEqual({
      links: origins.map((context) => ({ context })),
      parent: origins[0],
    });
  });

  it('when the requests are of several traces, then the span is a root linked to each', () => {
    const origins = [span('a', '1'), span('b', '2'), span('a', '3')];
    expect(batchSpanPlacement(origins)).toEqual({
      links: origins.map((context) => ({ context })),
      parent: undefined,
    });
  });

  it('when more requests than links fit are of one trace but a later one is not, then the span is a root with 128 links', () => {
    const origins = [
      ...Array.from({ length: 130 }, (_, i) => span('a', (i + 1).toString(16))),
      span('b', 'f'),
    ];
    const placement = batchSpanPlacement(origins)!;
    expect(placement.parent).toBeUndefined();
    expect(placement.links).toHaveLength(128);
  });
});
