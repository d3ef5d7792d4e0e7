import type { RequestHandler } from 'express';

/**
 * The routes a publishable key may use answer preflights and carry
 * `Access-Control-Allow-Origin: *` on every answer, errors included. No credentials mode.
 */
export function publicCors(allowedMethods: readonly string[]): RequestHandler {
  const methods = [...new Set([...allowedMethods, 'OPTIONS'])].join(', ');
  return (req, res, next) => {
    res.set('Access-Control-Allow-Origin', '*');
    res.set(
      'Access-Control-Expose-Headers',
      'X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset',
    );
    if (req.method === 'OPTIONS') {
      res.set('Access-Control-Allow-Methods', methods);
      res.set(
        'Access-Control-Allow-Headers',
        'Authorization, Content-Type, X-Request-Id, X-Herald-Client',
      );
      res.set('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    next();
  };
}
