// The trace sampler, built from OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG as the SDK builds
// it, with one difference for the parent-based samplers (see heraldSampler).
import {
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type SpanKind,
} from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import type { Env } from './settings.js';

type Sampler = tracing.Sampler;
type SamplingResult = tracing.SamplingResult;

/** What the SDK falls back to for a missing or unusable OTEL_TRACES_SAMPLER_ARG. */
const DEFAULT_RATIO = 1;

const isSampled = (link: Link) => (link.context.traceFlags & TraceFlags.SAMPLED) !== 0;

/**
 * A root span that links to a sampled span is kept; any other root is left to `root`. Only a
 * span started without a parent on purpose has such links: a batch carrying the work of sampled
 * requests of several traces (the outbox relay's `outbox publish`, the events batch's
 * `db.transaction`; with one trace it is a child of it instead). Sampled on its own ratio, it
 * would be lost for most sampled requests (for all of them at ratio 0), and the Kafka records
 * would carry an unsampled trace on to their consumers.
 */
export class SampledLinkSampler implements Sampler {
  constructor(private readonly root: Sampler) {}

  shouldSample(
    context: Context,
    traceId: string,
    spanName: string,
    spanKind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    if (links.some(isSampled)) return { decision: tracing.SamplingDecision.RECORD_AND_SAMPLED };
    return this.root.shouldSample(context, traceId, spanName, spanKind, attributes, links);
  }

  toString(): string {
    return `SampledLinkSampler{root=${this.root.toString()}}`;
  }
}

/** OTEL_TRACES_SAMPLER_ARG as the SDK reads it: a ratio in [0, 1], else 1. */
export function samplerRatio(env: Env = process.env): number {
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = raw ? Number(raw) : NaN;
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    process.emitWarning(
      `OTEL_TRACES_SAMPLER_ARG: ${raw ? `${JSON.stringify(raw)} is not a ratio from 0 to 1` : 'not set'}; sampling every root span (${DEFAULT_RATIO})`,
      'HeraldTelemetryWarning',
    );
    return DEFAULT_RATIO;
  }
  return ratio;
}

/**
 * The sampler for `OTEL_TRACES_SAMPLER`; undefined leaves it to the SDK (unset: every root span
 * is sampled, then parent-based; `always_on`, `always_off`, `traceidratio` and names the SDK
 * reports as unknown). The parent-based samplers (`parentbased_always_on`,
 * `parentbased_always_off`, `parentbased_traceidratio`) follow the parent as usual, and a root
 * span that links to a sampled span is kept whatever the root sampler says (SampledLinkSampler):
 * a sampled request stays whole through the outbox, up to the Kafka records it caused.
 */
export function heraldSampler(env: Env = process.env): Sampler | undefined {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  let root: Sampler;
  switch (name) {
    case 'parentbased_always_on':
      root = new tracing.AlwaysOnSampler();
      break;
    case 'parentbased_always_off':
      root = new tracing.AlwaysOffSampler();
      break;
    case 'parentbased_traceidratio':
      root = new tracing.TraceIdRatioBasedSampler(samplerRatio(env));
      break;
    default:
      return undefined;
  }
  return new tracing.ParentBasedSampler({ root: new SampledLinkSampler(root) });
}
