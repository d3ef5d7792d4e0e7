import { NOT_STORABLE, STORABLE_JSON_VALUE_REF, STORABLE_PATTERN, storable } from '@herald/http';
import { z } from 'zod';

/** The API's limits (docs/api-reference.md#limits). */
export const MAX_EVENTS_PER_REQUEST = 1000;
export const MAX_PROPERTIES_BYTES = 32 * 1024;
export const MAX_PROPERTIES_DEPTH = 64;

// A string PostgreSQL cannot store (U+0000) anywhere in a value is a 400, never a 5xx.
const text = (max: number) =>
  z.string().min(1).max(max).refine(storable, NOT_STORABLE).meta({ pattern: STORABLE_PATTERN });

/** The number written by the ASCII digits of `value` from `start` to `end`. */
function digits(value: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i += 1) n = n * 10 + value.charCodeAt(i) - 48;
  return n;
}

/**
 * Whether the date of a value z.iso.datetime accepted (`YYYY-MM-DDT...`, a 4-digit year) is one
 * of the proleptic Gregorian calendar: month 1 to 12, no February 30, February 29 only in leap
 * years. Read from the digits in place, since it runs for every Event.
 */
export function isCalendarDate(value: string): boolean {
  const y = digits(value, 0, 4);
  const m = digits(value, 5, 7);
  const d = digits(value, 8, 10);
  if (m < 1 || m > 12 || d < 1) return false;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const days = m === 2 ? (leap ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
  return d <= days;
}

/** The first and the last instant whose UTC date-time has a four-digit year. */
export const EARLIEST_OCCURRED_AT = '0000-01-01T00:00:00.000Z';
export const LATEST_OCCURRED_AT = '9999-12-31T23:59:59.999Z';
const EARLIEST_MS = Date.parse(EARLIEST_OCCURRED_AT);
const LATEST_MS = Date.parse(LATEST_OCCURRED_AT);

/**
 * Whether the instant of a value z.iso.datetime accepted lies in the years 0000 to 9999 in UTC:
 * outside them it has no RFC 3339 form in UTC, the one it is stored and written back in
 * (JavaScript writes `-000001-…` or `+010000-…`). An offset moves the instant by less than a
 * day, so only the years 0000 and 9999 need a Date.
 */
export function isWithinFourDigitYears(value: string): boolean {
  const year = digits(value, 0, 4);
  if (year > 0 && year < 9999) return true;
  const at = Date.parse(value);
  return at >= EARLIEST_MS && at <= LATEST_MS;
}

const OCCURRED_AT_FORMAT =
  'must be an RFC 3339 date-time with an offset, e.g. 2026-03-04T05:06:07.123Z';

/**
 * RFC 3339 with an explicit offset (`Z` or `+hh:mm`); impossible dates (February 30, hour 25)
 * fail the format or the round trip through Date, and so does an instant outside the years 0000
 * to 9999 in UTC. RFC 3339 §5.6 allows a lower-case `t` and `z`:
 * the value is upper-cased first (nothing else in it has a case). The OpenAPI document shows the
 * input: a string of format `date-time` (which allows the lower case too).
 */
export const occurredAt = z
  .string({ error: OCCURRED_AT_FORMAT })
  .meta({
    format: 'date-time',
    description: `with an offset; the instant in UTC from ${EARLIEST_OCCURRED_AT} to ${LATEST_OCCURRED_AT}`,
  })
  .transform((value) => value.toUpperCase())
  .pipe(
    z.iso.datetime({
      offset: true,
      error: OCCURRED_AT_FORMAT,
    }),
  )
  .refine(isCalendarDate, 'must be a real RFC 3339 date-time')
  .refine(
    isWithinFourDigitYears,
    `must be an instant from ${EARLIEST_OCCURRED_AT} to ${LATEST_OCCURRED_AT} in UTC`,
  );

// These checks run on every Event of a request, so they walk the value in place: no arrays of
// entries, values or pairs, which were a fifth of what recording a large array allocated.

function storableDeep(value: unknown): boolean {
  if (typeof value === 'string') return storable(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) if (!storableDeep(value[i])) return false;
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key in record) if (!storable(key) || !storableDeep(record[key])) return false;
  }
  return true;
}

/**
 * Whether no object or array in the value lies more than MAX_PROPERTIES_DEPTH levels deep (the
 * value itself is level 1). It recurses at most MAX_PROPERTIES_DEPTH + 1 calls deep whatever the
 * body nests, so it runs first: the recursive checks below (and JSON.stringify) run only on a
 * value it passed.
 */
function withinDepth(value: unknown, level: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (level > MAX_PROPERTIES_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      if (!withinDepth(value[i], level + 1)) return false;
    }
  } else {
    const record = value as Record<string, unknown>;
    for (const key in record) if (!withinDepth(record[key], level + 1)) return false;
  }
  return true;
}

const depthCheck = {
  message: `must be nested at most ${MAX_PROPERTIES_DEPTH} levels deep`,
  abort: true,
} as const;
const fitsSize = (value: unknown) =>
  Buffer.byteLength(JSON.stringify(value)) <= MAX_PROPERTIES_BYTES;
const sizeMessage = `must be at most ${MAX_PROPERTIES_BYTES} bytes as JSON`;

export const properties = z
  .record(z.string(), z.unknown())
  .refine((value) => withinDepth(value, 1), depthCheck)
  .refine(fitsSize, sizeMessage)
  .refine(storableDeep, NOT_STORABLE)
  .meta({
    description: `any JSON object, at most ${MAX_PROPERTIES_BYTES} bytes as JSON and ${MAX_PROPERTIES_DEPTH} levels deep; no string or key in it holds U+0000`,
    propertyNames: { pattern: STORABLE_PATTERN },
    additionalProperties: { $ref: STORABLE_JSON_VALUE_REF },
  });

/**
 * The same limits over the properties object exactly as parsed from the body, whose every key is
 * stored: zod's copy above leaves out a `__proto__` key.
 */
export const propertiesAsSent = z
  .unknown()
  .refine((value) => withinDepth(value, 1), depthCheck)
  .refine(fitsSize, sizeMessage)
  .refine(storableDeep, NOT_STORABLE);

/** Fields every route accepts; each route adds its own identity and reads no other. */
const common = {
  eventName: text(255),
  occurredAt,
  dedupKey: text(255).optional(),
  properties: properties.optional(),
  organizationExternalId: text(255).optional(),
};

export const byContactIdEvent = z.object({ ...common, contactId: z.string().min(1).max(255) });
export const byExternalIdEvent = z.object({ ...common, contactExternalId: text(255) });
export const byEmailEvent = z.object({ ...common, contactEmail: text(254) });
export const byOrganizationEvent = z.object({
  ...common,
  organizationExternalId: text(255),
  contactId: z.string().min(1).max(255).optional(),
});

export type ByContactIdEvent = z.output<typeof byContactIdEvent>;
export type ByExternalIdEvent = z.output<typeof byExternalIdEvent>;
export type ByEmailEvent = z.output<typeof byEmailEvent>;
export type ByOrganizationEvent = z.output<typeof byOrganizationEvent>;

export const acceptedResponse = z.object({ accepted: z.number().int() });

export const eventNamesResponse = z.object({
  eventNames: z.array(z.object({ name: z.string(), firstSeenAt: z.iso.datetime() })),
});
