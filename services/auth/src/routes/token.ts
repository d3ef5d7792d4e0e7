import type { Express } from 'express';
import { methodNotAllowed } from '@herald/errors';
import { publicCors } from '@herald/http';
import { parseBasicCredentials } from '../domain/credentials.js';
import { exchangeCredentials, type TokenExchangeDeps } from '../domain/token-exchange.js';

export function mountTokenRoutes(app: Express, deps: TokenExchangeDeps): void {
  // Browser code exchanges publishable keys here (decisions D.3).
  app.use('/v1/token', publicCors(['POST']));
  app
    .route('/v1/token')
    .post(async (req, res) => {
      const token = await exchangeCredentials(
        deps,
        parseBasicCredentials(req.get('authorization')),
        // The peer, or the client the trusted ingress names in X-Forwarded-For.
        req.ip ?? req.socket.remoteAddress ?? 'unknown',
      );
      res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(token);
    })
    .all(methodNotAllowed(['POST']));
}

export function mountJwksRoute(app: Express, jwks: object): void {
  app.get('/.well-known/jwks.json', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(jwks);
  });
}
