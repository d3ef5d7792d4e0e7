// A scripted `fetch` for the unit tests: each request is recorded and answered by a handler.
// (The integration tests use the real stack; this stands in for the network only.)
export interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal | null | undefined;
  keepalive: boolean | undefined;
}

export type Handler = (
  request: Sent,
  index: number,
) => Response | Promise<Response> | 'network-error';

export function json(status: number, body: unknown, headers: Record<string, string> = {}) {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': `rid-${status}`, ...headers },
  });
}

export const tokenAnswer = (accessToken: string, expiresIn = 900) =>
  json(200, { accessToken, tokenType: 'Bearer', expiresIn });

export function fakeFetch(handler: Handler) {
  const sent: Sent[] = [];
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    const request: Sent = {
      url,
      method: init.method ?? 'GET',
      headers: { ...(init.headers as Record<string, string>) },
      body: init.body as string | undefined,
      signal: init.signal,
      keepalive: init.keepalive,
    };
    sent.push(request);
    if (init.signal?.aborted) throw init.signal.reason;
    const outcome = await handler(request, sent.length - 1);
    if (outcome === 'network-error') throw new TypeError('fetch failed');
    return outcome;
  };
  return { fetch, sent };
}

/** A fetch answer that never comes until the request is aborted (a timeout). */
export function hang(signal: AbortSignal | null | undefined): Promise<Response> {
  return new Promise((_, reject) => {
    signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
}
