// The operator API as the console calls it: same origin, the admin token as a bearer token, and
// every failure as an ApiError that says what happened and under which request id.
import { currentToken, forgetToken } from './session.js';

/** Where the console is served decides where the API is: `<prefix>/console/` → `<prefix>`. */
const prefix = location.pathname.replace(/\/console(\/.*)?$/, '');

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let unauthorized: () => void = () => {};

/** What to do when the API refuses the token (401): the app returns to sign-in. */
export function onUnauthorized(handler: () => void): void {
  unauthorized = handler;
}

interface ErrorBody {
  code?: string;
  type?: string;
  message?: string;
  detail?: string;
}

/** One request; resolves the answer when it is a success, else throws an ApiError. */
export async function request(
  method: string,
  path: string,
  options: { body?: unknown; signal?: AbortSignal; token?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.token ?? currentToken()}`,
  };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`${prefix}/admin/v1${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
      cache: 'no-store',
      // A single sign-on proxy whose session ended answers with a redirect to its sign-in page,
      // which the page's policy may not fetch: seen, not followed.
      redirect: 'manual',
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new ApiError(0, 'network_error', 'Herald could not be reached. Try again.', null);
  }
  if (res.type === 'opaqueredirect') {
    throw new ApiError(
      0,
      'sign_in_required',
      'Your sign-in to this site ended: reload the page to sign in again.',
      null,
    );
  }
  if (res.ok) return res;
  const requestId = res.headers.get('x-request-id');
  let code = `http_${res.status}`;
  let message = res.statusText || 'The request failed.';
  try {
    const body = (await res.json()) as ErrorBody;
    code = body.code ?? body.type ?? code;
    message = body.message ?? body.detail ?? message;
  } catch {
    // not JSON (a proxy's own page): the status says it
  }
  if (res.status === 401) {
    forgetToken();
    unauthorized();
  }
  throw new ApiError(res.status, code, message, requestId);
}

/** A request whose answer is JSON (or nothing, for 204). */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await request(method, path, { body });
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** A path segment or query value, encoded. */
export const enc = encodeURIComponent;
