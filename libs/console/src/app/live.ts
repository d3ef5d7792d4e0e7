// The live view's stream: the operator API's Server-Sent Events read with fetch (EventSource
// cannot send the admin token in a header, and the token must not go in the URL).
import { enc, request } from './api.js';
import type { LiveEvent } from './types.js';

export interface LiveHandlers {
  /** The stream is open: Events recorded from now on come. */
  open(): void;
  event(event: LiveEvent): void;
  skipped(count: number, atLeast: boolean): void;
}

/** Reads the Tenant's live view until `signal` aborts or the stream ends (then it resolves). */
export async function followLiveEvents(
  tenantId: string,
  handlers: LiveHandlers,
  signal: AbortSignal,
): Promise<void> {
  const res = await request('GET', `/tenants/${enc(tenantId)}/events/live`, { signal });
  handlers.open();
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n?/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        dispatch(buffer.slice(0, end), handlers);
        buffer = buffer.slice(end + 2);
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}

function dispatch(block: string, handlers: LiveHandlers): void {
  let event = 'message';
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  if (!data) return;
  if (event === 'recorded') handlers.event(JSON.parse(data) as LiveEvent);
  else if (event === 'skipped') {
    const { count, atLeast } = JSON.parse(data) as { count: number; atLeast: boolean };
    handlers.skipped(count, atLeast);
  }
}
