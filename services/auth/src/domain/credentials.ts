import { randomBytes } from 'node:crypto';
import { PUBLISHABLE_CLIENT_ID_PREFIX } from '@herald/auth';

/**
 * Recognisable prefixes (`ck_`, `sk_`, `pk_`) so secret scanners find leaked credentials.
 * The random part is base62 (letters and digits only) so a scanner's regex is simple.
 */
const PREFIX = {
  secretClientId: 'ck_',
  secret: 'sk_',
  publishableClientId: PUBLISHABLE_CLIENT_ID_PREFIX,
} as const;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const base62Length = (bytes: number) => Math.ceil((bytes * 8) / Math.log2(62));

/** `bytes` of randomness as base62 (rejection sampling, so every character is uniform). */
export function randomBase62(bytes: number): string {
  const length = base62Length(bytes);
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export type KeyKind = 'secret' | 'publishable';

const CLIENT_ID_BYTES = 16;

export function newClientId(kind: KeyKind): string {
  return (
    (kind === 'secret' ? PREFIX.secretClientId : PREFIX.publishableClientId) +
    randomBase62(CLIENT_ID_BYTES)
  );
}

/** The shape of every ClientID `newClientId` gives (the OpenAPI document states it too). */
export const CLIENT_ID = new RegExp(
  `^(${PREFIX.secretClientId}|${PREFIX.publishableClientId})[0-9A-Za-z]{${base62Length(CLIENT_ID_BYTES)}}$`,
);

/**
 * Whether the string has the shape `newClientId` gives. Anything else (U+0000, which PostgreSQL
 * refuses, any control character, an over-long value) names no key and is never looked up.
 */
export const isClientId = (value: string): boolean => CLIENT_ID.test(value);

/** 256 bits of randomness. */
export function newSecret(): string {
  return PREFIX.secret + randomBase62(32);
}

export interface BasicCredentials {
  clientId: string;
  secret: string;
}

/** RFC 7617 Basic credentials, or null when the header is missing or unparseable. */
export function parseBasicCredentials(header: string | undefined): BasicCredentials | null {
  const match = /^Basic ([A-Za-z0-9+/]+=*)$/i.exec(header?.trim() ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  return { clientId: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}
