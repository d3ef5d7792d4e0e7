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

/** The principal `authenticate` stored; routes call this after it ran. */
export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('principalOf called on a route without authentication');
  return principal;
}
