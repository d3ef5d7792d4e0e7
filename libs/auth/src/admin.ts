import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { AppError } from '@herald/errors';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Guards routes that are not the customers': `Authorization: Bearer <secret>`, compared in
 * constant time (both sides hashed first, so length differences do not leak either).
 */
function requireBearerSecret(secret: string, realm: string, what: string): RequestHandler {
  const expected = digest(secret);
  return (req, _res, next) => {
    const header = req.get('authorization') ?? '';
    const presented = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    if (!presented || !timingSafeEqual(digest(presented), expected)) {
      throw new AppError(`missing or wrong ${what}`, {
        code: 'unauthenticated',
        status: 401,
        headers: { 'WWW-Authenticate': `Bearer realm="${realm}"` },
      });
    }
    next();
  };
}

/**
 * The operator API (docs/api-reference.md#the-operator-api), with ADMIN_TOKEN. The internal
 * routes have their own guard, with a token per caller (`requireServiceCaller`).
 */
export const requireAdminToken = (adminToken: string) =>
  requireBearerSecret(adminToken, 'herald-admin', 'admin token');
