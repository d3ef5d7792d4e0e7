import { SpanKind, createContextKey, type Attributes, type Context } from '@opentelemetry/api';

/**
 * Messages that leave with the trace context they were stored with. The kafkajs instrumentation
 * gives every message of a traced send a producer span and writes that span's context over the
 * message's `traceparent`. For a message whose request was not sampled, that would make its
 * consumers continue a trace the message has nothing to do with (another request's, or the
 * relay's): such a message is marked here before the send, and the instrumentation's producer
 * hook puts its own headers back.
 */
const ownTraceHeaders = new WeakMap<object, { traceparent?: unknown; tracestate?: unknown }>();

/** Keeps `headers`' traceparent and tracestate (or their absence) through a traced send. */
export function keepOwnTraceContext(headers: Record<string, unknown>): void {
  ownTraceHeaders.set(headers, {
    traceparent: headers.traceparent,
    tracestate: headers.tracestate,
  });
}

/** The kafkajs producer hook: restores what keepOwnTraceContext kept, after the injection. */
export function restoreOwnTraceContext(
  _span: unknown,
  { message }: { message: { headers?: Record<string, unknown> } },
): void {
  const headers = message.headers;
  const kept = headers && ownTraceHeaders.get(headers);
  if (!kept) return;
  for (const name of ['traceparent', 'tracestate'] as const) {
    if (kept[name] === undefined) delete headers[name];
    else headers[name] = kept[name];
  }
}

const SAMPLED_MESSAGES = createContextKey('herald.sampled-messages');

const messageName = (topic: unknown, key: unknown) => `${String(topic)}\u0000${String(key)}`;

/**
 * Names, on `ctx`, the messages of a traced send that come from sampled requests, by topic and
 * key. Under it, a parent-based Herald sampler records no producer span for any other message
 * (isUnsampledMessageSpan): a batch with one sampled request in it would otherwise record a span
 * for every message it sends. A key shared by a sampled and an unsampled message of the batch
 * gets spans for both.
 */
export function withSampledMessages(
  ctx: Context,
  messages: Iterable<{ topic: string; key: string }>,
): Context {
  const names = new Set<string>();
  for (const { topic, key } of messages) names.add(messageName(topic, key));
  return ctx.setValue(SAMPLED_MESSAGES, names);
}

/**
 * Whether a span about to start under `ctx` is the producer span of a message that
 * withSampledMessages did not name. The kafkajs instrumentation names the message by its
 * `messaging.destination.name` and `messaging.kafka.message.key` attributes.
 */
export function isUnsampledMessageSpan(
  ctx: Context,
  kind: SpanKind,
  attributes: Attributes,
): boolean {
  if (kind !== SpanKind.PRODUCER) return false;
  const names = ctx.getValue(SAMPLED_MESSAGES) as ReadonlySet<string> | undefined;
  if (names === undefined) return false;
  return !names.has(
    messageName(
      attributes['messaging.destination.name'],
      attributes['messaging.kafka.message.key'],
    ),
  );
}
