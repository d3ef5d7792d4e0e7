import type { Request, Response } from 'express';
import { errors } from '@herald/errors';
import type { Scope } from './scopes.js';
import type { Principal } from './token.js';
import type { TokenVerifier } from './verifier.js';

const BEARER = /^Bearer ([A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+)$/;

/**
 * The caller's bearer token, verified: 401 unauthenticated for a missing, malformed, expired,
 * forged or revoked token. Stores the principal for `principalOf`.
 */
export async function authenticate(
  req: Request,
  res: Response,
  verifier: TokenVerifier,
): Promise<Principal> {
  const match = BEARER.exec(req.get('authorization') ?? '');
  if (!match) throw errors.unauthenticated();
  const principal = await verifier.verify(match[1]!);
  res.locals.principal = principal;
  return principal;
}

/** 403 insufficient_scope naming the scope the key lacks (`missing scope contacts:read`). */
export function assertScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.has(scope)) throw errors.insufficientScope(scope);
}

const IDENTIFIER_LOOKUP_REFUSED =
  'a publishable key records Events by contactId only; naming a Contact by email or externalId, or an organization, needs a publishable key created with identifierLookup';

/**
 * 403 forbidden unless a publishable key may name Contacts and organizations by identifier
 * (email, externalId): the answer to such a key never depends on whether one exists, because it
 * comes before anything is looked up. Secret keys always may.
 */
export function assertIdentifierLookup(principal: Principal): void {
  if (principal.publishable && !principal.publishable.identifierLookup) {
    throw errors.forbidden(IDENTIFIER_LOOKUP_REFUSED);
  }
}

/**
 * 403 forbidden when a publishable key has an Origin allow-list and the request's `Origin`
 * header is not on it, or missing (browsers always send it on these cross-origin calls).
 */
export function assertOriginAllowed(principal: Principal, origin: string | undefined): void {
  const allowed = principal.publishable?.allowedOrigins;
  if (!allowed || allowed.length === 0) return;
  if (origin === undefined || !allowed.includes(origin.toLowerCase())) {
    throw errors.forbidden(
      origin === undefined
        ? 'this publishable key works only from its allowed browser Origins, and the request has no Origin header'
        : `this publishable key does not work from the Origin ${JSON.stringify(origin)}`,
    );
  }
}

/** The principal `authenticate` stored; routes call this after it ran. */
export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('principalOf called on a route without authentication');
  return principal;
}
