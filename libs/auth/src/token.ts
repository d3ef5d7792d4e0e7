/**
 * The access token's shape, shared by the auth service (which signs) and every other
 * service (which verifies), so the two cannot drift.
 */
export const TOKEN_ALGORITHM = 'ES256';
/** RFC 9068: marks the JWT as an access token, so no other JWT can be replayed as one. */
export const TOKEN_TYPE = 'at+jwt';
export const TOKEN_TTL_SECONDS = 900;
export const DEFAULT_ISSUER = 'herald-auth';
export const DEFAULT_AUDIENCE = 'herald-api';

/** Private claim names. `sub` is the ClientID too, as OAuth 2.0 client-credentials tokens do. */
export const CLAIMS = {
  tenantId: 'tid',
  clientId: 'client_id',
  scope: 'scope',
} as const;

/** The caller a verified token stands for. */
export interface Principal {
  tenantId: string;
  clientId: string;
  scopes: ReadonlySet<string>;
  tokenId: string;
  expiresAt: Date;
}
