import { types } from 'node:util';

// Errors that mean "a dependency could not be reached" rather than "this request is wrong":
// they answer 503 with Retry-After, never 500, so clients retry with backoff.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

// PostgreSQL SQLSTATEs: class 08 (connection exception), admin/crash shutdown, cannot
// connect now, and class 53 (insufficient resources: a full disk, out of memory, too many
// connections): the server cannot take the request now, through no fault of the request.
const PG_UNAVAILABLE = /^(08...|57P0[1-3]|53...)$/;

const CONNECT_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error',
  'The client is closed',
];

// `instanceof Error` is false for an error made in another realm: Node's own errors (a refused
// connection) seen from code running in a vm context, as jest runs tests.
const isError = (err: unknown): err is Error => err instanceof Error || types.isNativeError(err);

export function isDependencyUnavailable(err: unknown, depth = 0): boolean {
  if (!isError(err) || depth > 4) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || PG_UNAVAILABLE.test(code))) {
    return true;
  }
  if (CONNECT_MESSAGES.some((m) => err.message.includes(m))) return true;
  if (
    Array.isArray((err as Partial<AggregateError>).errors) &&
    (err as AggregateError).errors.some((e) => isDependencyUnavailable(e, depth + 1))
  ) {
    return true;
  }
  return isDependencyUnavailable(err.cause, depth + 1);
}
