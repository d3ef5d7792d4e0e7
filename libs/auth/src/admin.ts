import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { AppError } from '@herald/errors';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Guards the operator API (decisions I): `Authorization: Bearer <ADMIN_TOKEN>`, compared in
 * constant time (both sides hashed first, so length differences do not leak either).
 */
export function requireAdminToken(adminToken: string): RequestHandler {
  const expected = digest(adminToken);
  return (req, _res, next) => {
    const header = req.get('authorization') ?? '';
    const presented = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    if (!presented || !timingSafeEqual(digest(presented), expected)) {
      throw new AppError('missing or wrong admin token', {
        code: 'unauthenticated',
        status: 401,
        headers: { 'WWW-Authenticate': 'Bearer realm="herald-admin"' },
      });
    }
    next();
  };
}
