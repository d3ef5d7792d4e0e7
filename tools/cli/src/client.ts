import { readFileSync } from 'node:fs';
import { CliError } from './settings.js';

/** The package's version, from its package.json beside src/ and dist/. */
export const CLI_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

export interface ApiRequest {
  readonly method: string;
  /** Starts with `/`; path segments already percent-encoded. */
  readonly path: string;
  readonly body?: unknown;
}

export interface ApiAnswer {
  readonly status: number;
  readonly statusText: string;
  /** Parsed JSON; the raw text when it is not JSON; `undefined` when empty. */
  readonly body: unknown;
  /** The body as it came (empty when it was read as it came, by a StreamReader). */
  readonly text: string;
  /** A streamed answer the caller stopped (Ctrl-C) rather than one that ended. */
  readonly stopped?: boolean;
}

const TIMEOUT_MS = 30_000;

/**
 * A reader of a successful answer's body as it comes, chunk by chunk, until the answer ends or
 * `stopped` resolves (the answer's `text` is then empty).
 */
export interface StreamReader {
  chunk(text: string): void;
  stopped: Promise<void>;
}

/** Sends one operator API request with the admin token. Any HTTP answer resolves. */
export async function callApi(
  baseUrl: string,
  adminToken: string,
  request: ApiRequest,
  stream?: StreamReader,
): Promise<ApiAnswer> {
  const url = `${baseUrl}${request.path}`;
  let headers: Headers;
  try {
    headers = new Headers({
      accept: 'application/json',
      authorization: `Bearer ${adminToken}`,
      'user-agent': `herald-admin/${CLI_VERSION}`,
    });
  } catch {
    throw new CliError('the admin token holds characters that cannot go in an HTTP header');
  }
  if (request.body !== undefined) headers.set('content-type', 'application/json');

  let response: Response;
  let text = '';
  let stopped = false;
  const stop = new AbortController();
  // Read as it comes (a stream, a file), an answer's start is timed and its end is not; the
  // caller's stop (Ctrl-C) counts from the start, before any answer.
  const unanswered = stream
    ? setTimeout(() => stop.abort(new DOMException('no answer', 'TimeoutError')), TIMEOUT_MS)
    : undefined;
  void stream?.stopped.then(() => {
    stopped = true;
    stop.abort();
  });
  try {
    try {
      response = await fetch(url, {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: stream ? stop.signal : AbortSignal.timeout(TIMEOUT_MS),
      });
    } finally {
      clearTimeout(unanswered);
    }
    if (stream && response.ok && response.body) {
      const decoder = new TextDecoder();
      try {
        for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
          stream.chunk(decoder.decode(bytes, { stream: true }));
        }
      } catch (error) {
        if (!stopped) throw error;
      }
    } else text = await response.text();
  } catch (error) {
    if (stopped) return { status: 0, statusText: 'stopped', body: undefined, text: '', stopped };
    throw new CliError(
      `could not reach ${request.method} ${url} (${reasonOf(error)})\n` +
        'hint: is the stack running? Start it with "npm start", or set HERALD_URL to the ingress address.',
    );
  }
  return {
    status: response.status,
    statusText: response.statusText,
    body: parseBody(text),
    text,
    stopped,
  };
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

interface ErrorShape {
  name?: string;
  message?: string;
  code?: string;
  cause?: ErrorShape;
}

/**
 * `connect ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND host`, `no answer within 30 s`.
 * fetch's errors may come from another realm (jest's VM), so they are read by shape.
 */
function reasonOf(error: unknown): string {
  const { name, message, cause } = (error ?? {}) as ErrorShape;
  if (name === 'TimeoutError') return `no answer within ${TIMEOUT_MS / 1000} s`;
  if (cause?.message && (!cause.code || cause.message.includes(cause.code))) return cause.message;
  return cause?.code ?? message ?? String(error);
}
