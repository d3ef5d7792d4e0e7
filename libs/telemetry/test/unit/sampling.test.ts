import { describe, expect, it, jest } from '@jest/globals';
import {
  ROOT_CONTEXT,
  SpanKind,
  TraceFlags,
  trace,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { heraldSampler, samplerRatio } from '../../src/sampling.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

function spanContext(sampled: boolean, spanId = '00f067aa0ba902b7'): SpanContext {
  return {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId,
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  };
}

const link = (sampled: boolean, spanId?: string): Link => ({
  context: spanContext(sampled, spanId),
});

function decide(sampler: tracing.Sampler, options: { parent?: boolean; links?: Link[] } = {}) {
  const context =
    options.parent === undefined
      ? ROOT_CONTEXT
      : trace.setSpanContext(ROOT_CONTEXT, spanContext(options.parent));
  return sampler.shouldSample(context, TRACE_ID, 'span', SpanKind.INTERNAL, {}, options.links ?? [])
    .decision;
}

const { NOT_RECORD, RECORD_AND_SAMPLED } = tracing.SamplingDecision;

describe('heraldSampler', () => {
  it('when OTEL_TRACES_SAMPLER is unset or not parent-based, then the SDK builds the sampler', () => {
    expect(heraldSampler({})).toBeUndefined();
    expect(heraldSampler({ OTEL_TRACES_SAMPLER: 'always_off' })).toBeUndefined();
    expect(
      heraldSampler({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }),
    ).toBeUndefined();
    expect(heraldSampler({ OTEL_TRACES_SAMPLER: 'nonsense' })).toBeUndefined();
  });

  it('when parent-based at ratio 0, then a root span is dropped unless it links to a sampled span', () => {
    const sampler = heraldSampler({
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    })!;
    expect(decide(sampler)).toBe(NOT_RECORD);
    expect(decide(sampler, { links: [link(false)] })).toBe(NOT_RECORD);
    expect(decide(sampler, { links: [link(false), link(true, '00f067aa0ba902b8')] })).toBe(
      RECORD_AND_SAMPLED,
    );
  });

  it('when a span has a parent, then the parent decides, whatever its links', () => {
    const sampler = heraldSampler({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })!;
    expect(decide(sampler, { parent: true })).toBe(RECORD_AND_SAMPLED);
    expect(decide(sampler, { parent: false, links: [link(true)] })).toBe(NOT_RECORD);
    expect(decide(sampler, { links: [link(true)] })).toBe(RECORD_AND_SAMPLED);
    expect(decide(sampler)).toBe(NOT_RECORD);
  });

  it('when parent-based at ratio 1 or always on, then every root span is sampled', () => {
    for (const env of [
      { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' },
      { OTEL_TRACES_SAMPLER: ' PARENTBASED_ALWAYS_ON ' },
    ]) {
      expect(decide(heraldSampler(env)!)).toBe(RECORD_AND_SAMPLED);
    }
  });
});

describe('samplerRatio', () => {
  it('when the argument is a ratio, then it is used; otherwise 1, as the SDK does, with a warning', () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      expect(samplerRatio({ OTEL_TRACES_SAMPLER_ARG: ' 0.25 ' })).toBe(0.25);
      expect(samplerRatio({ OTEL_TRACES_SAMPLER_ARG: '0' })).toBe(0);
      expect(warn).not.toHaveBeenCalled();
      expect(samplerRatio({ OTEL_TRACES_SAMPLER_ARG: 'half' })).toBe(1);
      expect(samplerRatio({ OTEL_TRACES_SAMPLER_ARG: '1.5' })).toBe(1);
      expect(samplerRatio({})).toBe(1);
      expect(warn).toHaveBeenCalledTimes(3);
    } finally {
      warn.mockRestore();
    }
  });
});
