import type { Queryable } from './pool.js';

/** How toISOString writes an instant of years 0 to 9999. */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A valid RFC 3339 instant as toISOString writes it (`2026-03-04T05:06:07.123Z`), without a
 * Date when it is written so already, as most clients write it.
 */
export function isoInstant(value: string): string {
  return CANONICAL.test(value) ? value : new Date(value).toISOString();
}

/**
 * An instant as PostgreSQL's timestamptz input reads it. Date#toISOString writes the year 1 BC as
 * `0000` and years past 9999 as `+010000`, both of which PostgreSQL refuses (it counts BC years
 * with a `BC` suffix, and reads five-digit years unsigned); RFC 3339 allows both instants (year
 * 0000; 9999-12-31 with a negative offset), so an API that takes RFC 3339 meets them.
 */
export function postgresTimestamp(at: Date | string): string {
  const iso = typeof at === 'string' ? isoInstant(at) : at.toISOString();
  // Years 1 to 9999 are written YYYY-MM-DDTHH:MM:SS.sssZ, as PostgreSQL reads them.
  if (iso.length === 24 && !iso.startsWith('0000')) return iso;
  const year = new Date(iso).getUTCFullYear();
  // Everything after the year: -MM-DDTHH:MM:SS.sssZ.
  const rest = iso.slice(iso.indexOf('-', 1));
  return year >= 1 ? `${year}${rest}` : `${String(1 - year).padStart(4, '0')}${rest} BC`;
}

/**
 * The database's clock (the start of its current transaction, as `now()`): recording stamps
 * received_at with it, so cutoffs and watermarks over received_at are counted from it.
 */
export async function databaseNow(db: Queryable): Promise<Date> {
  const { rows } = await db.query<{ now: Date }>('select now() as now');
  return rows[0]!.now;
}
