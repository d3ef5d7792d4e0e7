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
