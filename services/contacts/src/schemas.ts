import {
  NO_CONTROL_PATTERN,
  NOT_STORABLE,
  STORABLE_PATTERN,
  nextCursor,
  pageQuery,
  storable,
} from '@herald/http';
import { contactSnapshot } from '@herald/messages';
import { z } from 'zod';

// Matching control characters is the point here.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** 1..254 characters, local@domain, no spaces. */
export const email = z
  .string()
  .min(1)
  .max(254)
  // `\s` spelled out: JavaScript's, so that the document's pattern means the same everywhere.
  .regex(
    /^[^@\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+@[^@.\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+(\.[^@.\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+)*$/,
    'must be an email address like name@example.com',
  )
  .refine((s) => !CONTROL.test(s), 'must not contain control characters')
  .meta({ allOf: [{ pattern: NO_CONTROL_PATTERN }] });

export const name = z
  .string()
  .min(1)
  .max(256)
  .refine(storable, NOT_STORABLE)
  .meta({ pattern: STORABLE_PATTERN });

/** E.164: + then 2..15 digits. */
export const phone = z.string().regex(/^\+[0-9]{2,15}$/, 'must be E.164, e.g. +4915112345678');

export const timeZone = z
  .string()
  .refine((zone) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      return zone.length > 0;
    } catch {
      return false;
    }
  }, 'must be an IANA time zone name, e.g. Europe/Berlin')
  // The document lists the canonical names; the links (aliases) the runtime knows pass too.
  .meta({ enum: Intl.supportedValuesOf('timeZone') });

/** 1..255 characters, any Unicode except control characters ('/' included). */
export const externalId = z
  .string()
  .min(1)
  .max(255)
  .refine((s) => !CONTROL.test(s), 'must not contain control characters')
  .meta({ pattern: NO_CONTROL_PATTERN });

/**
 * The body of both upserts. Optional fields left out keep their stored value; `null` clears
 * them. Unknown fields are dropped (a Contact has a fixed set of fields).
 */
export const contactWriteBody = z.object({
  email,
  name: name.nullable().optional(),
  phone: phone.nullable().optional(),
  timeZone: timeZone.nullable().optional(),
});

export type ContactWrite = z.output<typeof contactWriteBody>;

/** The Contact object of the API: the same shape the Kafka messages carry. */
export const contactResponse = contactSnapshot;

export type ContactResponse = z.output<typeof contactResponse>;

export const organizationBody = z.object({
  externalId,
  name: name.optional(),
});

export const organizationResponse = z.object({
  externalId: z.string(),
  name: z.string().nullable(),
  createdAt: z.iso.datetime(),
});

/** A page of organizations: at most this many, 50 unless `limit` says. */
export const ORGANIZATION_PAGE = { default: 50, max: 100 } as const;

export const listOrganizationsQuery = z.object(pageQuery('organizations', ORGANIZATION_PAGE));

export const organizationListResponse = z.object({
  organizations: z.array(organizationResponse).describe('by externalId'),
  nextCursor,
});

/** The operator's search for a person's Contact: by any one of its identities. */
export const contactSearchQuery = z.object({
  identity: z
    .string()
    .min(1)
    .max(256)
    .describe("an externalId, an email (any case) or a Contact's id"),
});

export const contactSearchResponse = z.object({
  contacts: z
    .array(contactResponse)
    .describe(
      'every Contact of the Tenant with that externalId, email or id: none, one, or (when one Contact has it as its externalId and another as its email) more, oldest first',
    ),
});
