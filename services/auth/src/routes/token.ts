import type { RouteHandlers } from '@herald/http';
import { parseBasicCredentials } from '../domain/credentials.js';
import { exchangeCredentials, type TokenExchangeDeps } from '../domain/token-exchange.js';
import type { manifest } from '../manifest.js';

type Handlers = RouteHandlers<typeof manifest.routes>;

export function tokenHandlers(deps: TokenExchangeDeps): Pick<Handlers, 'exchangeToken'> {
  return {
    exchangeToken: async (req, res) => {
      const token = await exchangeCredentials(
        deps,
        parseBasicCredentials(req.get('authorization')),
        // The peer, or the client the trusted ingress names in X-Forwarded-For.
        req.ip ?? req.socket.remoteAddress ?? 'unknown',
      );
      res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(token);
    },
  };
}

export function jwksHandlers(jwks: object): Pick<Handlers, 'jwks'> {
  return {
    jwks: (_req, res) => {
      res.set('Cache-Control', 'public, max-age=300').json(jwks);
    },
  };
}
