import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { AppError, errors } from '@herald/errors';

/** The shortest token accepted in plain form (SERVICE_TOKEN, SERVICE_CALLERS, ADMIN_TOKEN). */
export const MIN_TOKEN_LENGTH = 24;

const NAME = /^[a-z][a-z0-9-]*$/;
const DIGEST = /^sha256:([0-9a-f]{64})$/;
/** What a plain token may hold: no separators of the list, no whitespace. */
const PLAIN = /^[^\s,]+$/;

/** SHA-256 of a token: what the guard compares, and the `sha256:<hex>` form of SERVICE_CALLERS. */
export const tokenDigest = (token: string): Buffer => createHash('sha256').update(token).digest();

/** One token a caller may present: the caller's process name and the token's SHA-256. */
export interface ServiceCallerToken {
  readonly name: string;
  readonly digest: Buffer;
}

/**
 * The Herald processes that may call a service's internal routes, each with one or more tokens
 * (several during a rotation). Only digests are kept: a caller's token is never needed here.
 */
export interface ServiceCallers {
  readonly tokens: readonly ServiceCallerToken[];
  /** The caller a presented token belongs to, or undefined; compares with every entry. */
  identify(token: string): string | undefined;
  /** The callers' names, each once, in list order. */
  names(): string[];
}

/**
 * Parses SERVICE_CALLERS: comma-separated `name:token` entries, e.g.
 * `contacts:<token>,events:<token>,events:<next token>`. The token is either the caller's token
 * itself (at least 24 characters) or its SHA-256 as `sha256:<64 hex digits>`, so a service can
 * check a caller without holding a token that would let it call others as that caller. A name
 * may come several times (the tokens of a rotation); one token may not stand for two callers.
 * Throws an Error whose message never contains a token.
 */
export function parseServiceCallers(text: string): ServiceCallers {
  const tokens: ServiceCallerToken[] = [];
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  entries.forEach((entry, index) => {
    const where = `entry ${index + 1}`;
    const colon = entry.indexOf(':');
    if (colon < 0) throw new Error(`${where} is not name:token`);
    const name = entry.slice(0, colon);
    const secret = entry.slice(colon + 1);
    if (!NAME.test(name)) {
      throw new Error(`${where}: the caller's name must be a process name like events`);
    }
    const digestForm = DIGEST.exec(secret);
    let digest: Buffer;
    if (digestForm) digest = Buffer.from(digestForm[1]!, 'hex');
    else if (secret.startsWith('sha256:')) {
      throw new Error(`${where} (${name}): sha256: must be followed by 64 lowercase hex digits`);
    } else if (!PLAIN.test(secret) || secret.length < MIN_TOKEN_LENGTH) {
      throw new Error(
        `${where} (${name}): the token must be at least ${MIN_TOKEN_LENGTH} characters without spaces`,
      );
    } else digest = tokenDigest(secret);
    const other = tokens.find((t) => t.digest.equals(digest));
    if (other && other.name !== name) {
      throw new Error(
        `${where}: ${name} has the same token as ${other.name}; every caller needs its own`,
      );
    }
    if (!other) tokens.push(Object.freeze({ name, digest }));
  });
  return serviceCallers(tokens);
}

function serviceCallers(tokens: readonly ServiceCallerToken[]): ServiceCallers {
  return Object.freeze({
    tokens: Object.freeze([...tokens]),
    identify(token: string) {
      const presented = tokenDigest(token);
      let found: string | undefined;
      // Every entry is compared, so the time taken does not tell which one matched.
      for (const entry of tokens) {
        if (timingSafeEqual(presented, entry.digest) && found === undefined) found = entry.name;
      }
      return found;
    },
    names: () => [...new Set(tokens.map((t) => t.name))],
  });
}

/** The guard of the internal routes: who is calling, and whether it may call this route. */
export interface ServiceCallerGuard {
  /**
   * 401 `unauthenticated` unless the bearer token is a known caller's; remembers the caller.
   * For prefixes, so an unknown path answers 401 to a stranger, never 404.
   */
  authenticate: RequestHandler;
  /**
   * `authenticate` (unless it ran already for this request), then 403 `forbidden` unless the
   * caller is one of `callers` (the route's allow-list in its service's manifest).
   */
  allow(callers: readonly string[]): RequestHandler;
}

const CALLER = 'serviceCaller';

/** The caller `authenticate` found for this request, if any. */
export function serviceCallerOf(res: Response): string | undefined {
  const caller: unknown = res.locals[CALLER];
  return typeof caller === 'string' ? caller : undefined;
}

const unknownCaller = () =>
  new AppError('missing or wrong service token', {
    code: 'unauthenticated',
    status: 401,
    headers: { 'WWW-Authenticate': 'Bearer realm="herald-internal"' },
  });

/**
 * Internal service-to-service routes (`/internal/v1/...`, never routed by the public ingress):
 * each calling process presents its own SERVICE_TOKEN, and the serving process knows them from
 * SERVICE_CALLERS. A customer's access token or the admin token opens nothing here.
 */
export function requireServiceCaller(callers: ServiceCallers): ServiceCallerGuard {
  const identify = (res: Response, header: string | undefined): string => {
    const known = serviceCallerOf(res);
    if (known !== undefined) return known;
    const presented = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    const caller = presented ? callers.identify(presented) : undefined;
    if (caller === undefined) throw unknownCaller();
    res.locals[CALLER] = caller;
    return caller;
  };
  return {
    authenticate: (req, res, next) => {
      identify(res, req.get('authorization'));
      next();
    },
    allow(allowed) {
      const names = new Set(allowed);
      return (req, res, next) => {
        const caller = identify(res, req.get('authorization'));
        if (!names.has(caller)) {
          throw errors.forbidden(`${caller} may not call ${req.method} ${req.path}`);
        }
        next();
      };
    },
  };
}
