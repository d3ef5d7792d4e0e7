import { NOT_STORABLE, storable } from '@herald/http';
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
  .regex(/^[^\s@]+@[^\s@.]+(\.[^\s@.]+)*$/, 'must be an email address like name@example.com')
  .refine((s) => !CONTROL.test(s), 'must not contain control characters');

export const name = z.string().min(1).max(256).refine(storable, NOT_STORABLE);

/** E.164: + then 2..15 digits. */
export const phone = z.string().regex(/^\+[0-9]{2,15}$/, 'must be E.164, e.g. +4915112345678');

export const timeZone = z.string().refine((zone) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone.length > 0;
  } catch {
    return false;
  }
}, 'must be an IANA time zone name, e.g. Europe/Berlin');

/** 1..255 characters, any Unicode except control characters ('/' included). */
export const externalId = z
  .string()
  .min(1)
  .max(255)
  .refine((s) => !CONTROL.test(s), 'must not contain control characters');

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
