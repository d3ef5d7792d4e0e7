import { secret, url, z } from '@herald/config';
import { DEFAULT_AUDIENCE, DEFAULT_ISSUER } from './token.js';

/** The variables of every service that verifies access tokens. */
export const tokenVerifierEnv = {
  AUTH_JWKS_URL: url('http://127.0.0.1:18081/.well-known/jwks.json'),
  AUTH_ISSUER: z.string().min(1).default(DEFAULT_ISSUER),
  AUTH_AUDIENCE: z.string().min(1).default(DEFAULT_AUDIENCE),
};

/** The shared secrets of services with operator and internal routes. */
export const operatorAndServiceTokensEnv = {
  ADMIN_TOKEN: secret(24),
  /** Opens the internal routes; shared by Herald's services, never by customers. */
  SERVICE_TOKEN: secret(24),
};
