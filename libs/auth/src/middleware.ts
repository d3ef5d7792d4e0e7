import type { RequestHandler, Response } from 'express';
import { errors } from '@herald/errors';
import type { Scope } from './scopes.js';
import type { Principal } from './token.js';
import type { TokenVerifier } from './verifier.js';

const BEARER = /^Bearer ([A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+)$/;

/**
 * Authenticates the bearer token and checks the route's scope: 401 unauthenticated for a
 * missing, malformed, expired or forged token; 403 insufficient_scope naming the scope.
 */
export function requireScope(verifier: TokenVerifier, scope: Scope): RequestHandler {
  return async (req, res, next) => {
    const match = BEARER.exec(req.get('authorization') ?? '');
    if (!match) throw errors.unauthenticated();
    const principal = await verifier.verify(match[1]!);
    if (!principal.scopes.has(scope)) throw errors.insufficientScope(scope);
    res.locals.principal = principal;
    next();
  };
}

/** The principal `requireScope` stored; routes call this after it ran. */
export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('principalOf called on a route without requireScope');
  return principal;
}
