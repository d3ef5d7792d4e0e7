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
  /** Publishable keys only, present when true: the key may name Contacts by email or externalId. */
  identifierLookup: 'identifier_lookup',
  /** Publishable keys only, present when the key has an Origin allow-list. */
  allowedOrigins: 'allowed_origins',
} as const;

/** The ClientID prefix of a publishable key (`pk_`); a secret key's is `ck_`. */
export const PUBLISHABLE_CLIENT_ID_PREFIX = 'pk_';

/**
 * What a publishable key may do beyond its scope. A publishable key is public (it ships in page
 * code), so by default it records Events by `contactId` only: any route that looks a Contact or
 * organization up by an identifier a stranger can guess (an email, an externalId) would answer
 * whether it exists.
 */
export interface PublishableKeyRules {
  /** Whether the key may name Contacts and organizations by email or externalId. */
  identifierLookup: boolean;
  /** The browser Origins its tokens work from; empty: any. */
  allowedOrigins: readonly string[];
}

/** The caller a verified token stands for. */
export interface Principal {
  tenantId: string;
  clientId: string;
  scopes: ReadonlySet<string>;
  /**
   * Set for a publishable key, known by its ClientID's prefix rather than a claim: a token
   * signed before the rules existed is held to the strictest ones.
   */
  publishable: PublishableKeyRules | null;
  tokenId: string;
  expiresAt: Date;
}
