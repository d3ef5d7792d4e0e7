import { errors, type AppError } from '@herald/errors';
import { REQUEST_ID_HEADER } from './request-id.js';

export interface InternalClientOptions {
  /** The other service's base URL, e.g. http://contacts:8080; a trailing slash is ignored. */
  baseUrl: string;
  /**
   * The calling process's own SERVICE_TOKEN, sent as a bearer token; the other service knows it
   * from its SERVICE_CALLERS and lets it into the routes that name this process.
   */
  serviceToken: string;
  /** How error messages name the other service, e.g. `the contacts service`. */
  serviceName: string;
  /** The timeout of a call that sets none. */
  timeoutMs: number;
}

export interface InternalRequest {
  method?: 'GET' | 'POST';
  /** The path under the base URL, its parameters already encoded. */
  path: string;
  /** Sent as the JSON body. */
  json?: unknown;
  timeoutMs?: number;
  /**
   * `answer` (the default): the timeout also covers reading the answer's body. `headers`: it
   * covers the status and headers only, so a body may stream for as long as it takes.
   */
  timeoutCovers?: 'answer' | 'headers';
  /** The request id of the call being served, passed on so both services log the same id. */
  requestId?: string;
}

export interface InternalCall extends InternalRequest {
  /** What the caller's client is told happened, e.g. `nothing was recorded; retry later`. */
  consequence: string;
  /** `text` (the default) reads the body; `discard` drains it, ignoring a failure to. */
  body?: 'text' | 'discard';
}

export interface InternalAnswer {
  status: number;
  /** The body as text; empty when it was discarded. */
  text: string;
}

/**
 * A client of another Herald service's `/internal/v1/...` routes. Trace context needs nothing
 * here: the telemetry's fetch instrumentation adds `traceparent` to every call.
 */
export interface InternalClient {
  /** The URL of a path under the service's base URL. */
  url(path: string): string;
  /** Sends the request and resolves with the answer; rejects as fetch does (unreachable, timeout). */
  send(request: InternalRequest): Promise<Response>;
  /**
   * Sends the request and reads the answer. Unreachable, a timeout or a 5xx is the 503
   * `service_unavailable` (with Retry-After) naming the service and the consequence; any other
   * status is the caller's to judge.
   */
  call(request: InternalCall): Promise<InternalAnswer>;
  /** The 503 for an answer with this status that the caller cannot use. */
  unavailable(status: number, consequence: string): AppError;
}

export function createInternalClient(options: InternalClientOptions): InternalClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const url = (path: string) => `${base}${path}`;

  function fetchOf(request: InternalRequest, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.serviceToken}` };
    if (request.json !== undefined) headers['content-type'] = 'application/json';
    if (request.requestId !== undefined) headers[REQUEST_ID_HEADER] = request.requestId;
    return fetch(url(request.path), {
      method: request.method ?? 'GET',
      headers,
      ...(request.json === undefined ? {} : { body: JSON.stringify(request.json) }),
      signal,
    });
  }

  /**
   * Runs `use` on the answer under a timer that stops when `use` is done. A stopped timer costs
   * nothing; AbortSignal.timeout's always fires, long after a quick answer, and makes an error
   * and an abort event each time: on a route calling for every request, that was measurable.
   */
  async function withTimeout<T>(
    request: InternalRequest,
    use: (res: Response) => Promise<T>,
  ): Promise<T> {
    const timeoutMs = request.timeoutMs ?? options.timeoutMs;
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new Error(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    try {
      return await use(await fetchOf(request, abort.signal));
    } finally {
      clearTimeout(timer);
    }
  }

  function send(request: InternalRequest): Promise<Response> {
    if (request.timeoutCovers === 'headers') {
      return withTimeout(request, (res) => Promise.resolve(res));
    }
    // The caller reads the body after this returns, when it likes: a timer that is never
    // stopped covers the reading too.
    return fetchOf(request, AbortSignal.timeout(request.timeoutMs ?? options.timeoutMs));
  }

  const unavailable = (status: number, consequence: string) =>
    errors.unavailable(`${options.serviceName} answered ${status}; ${consequence}`);

  return {
    url,
    send,
    unavailable,
    async call(request) {
      let answer: InternalAnswer;
      try {
        answer = await withTimeout(request, async (res) => {
          if (request.body !== 'discard') return { status: res.status, text: await res.text() };
          await res.arrayBuffer().catch(() => undefined);
          return { status: res.status, text: '' };
        });
      } catch (err) {
        throw errors.unavailable(
          `cannot reach ${options.serviceName}; ${request.consequence}`,
          err,
        );
      }
      if (answer.status >= 500) throw unavailable(answer.status, request.consequence);
      return answer;
    },
  };
}
