// Every instant RFC 3339 can write, as a string PostgreSQL reads back as the same instant.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { isoInstant, postgresTimestamp } from '../../src/index.js';

const url = `${process.env.HERALD_POSTGRES_URL ?? 'postgres://herald@127.0.0.1:55432'}/postgres`;
let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: url });
  await client.connect();
});
afterAll(() => client.end());

describe('postgresTimestamp', () => {
  it.each([
    ['an ordinary instant', '2026-03-04T05:06:07.123Z', '2026-03-04T05:06:07.123Z'],
    [
      'an ordinary instant at an offset',
      '2026-03-04T05:06:07.123+01:00',
      '2026-03-04T04:06:07.123Z',
    ],
    ['an instant without milliseconds', '2026-03-04T05:06:07Z', '2026-03-04T05:06:07.000Z'],
    ['year 1 as toISOString writes it', '0001-01-01T00:00:00.000Z', '0001-01-01T00:00:00.000Z'],
    [
      'year 0000 as toISOString writes it',
      '0000-06-01T12:00:00.000Z',
      '0001-06-01T12:00:00.000Z BC',
    ],
    ['year 9999 as toISOString writes it', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['year 1', '0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['year 0000 (1 BC)', '0000-06-01T12:00:00Z', '0001-06-01T12:00:00.000Z BC'],
    [
      'year 1 at an offset that reaches 1 BC',
      '0001-01-01T00:00:01+00:01',
      '0001-12-31T23:59:01.000Z BC',
    ],
    [
      'year 0000 at an offset that reaches 2 BC',
      '0000-01-01T00:00:00+23:59',
      '0002-12-31T00:01:00.000Z BC',
    ],
    [
      '9999-12-31 at a negative offset (year 10000)',
      '9999-12-31T23:59:59-23:59',
      '10000-01-01T23:58:59.000Z',
    ],
  ])('when the instant is %s, then PostgreSQL stores that instant', async (_, rfc3339, written) => {
    expect(postgresTimestamp(rfc3339)).toBe(written);
    const { rows } = await client.query<{ ms: string }>(
      'select (extract(epoch from $1::timestamptz) * 1000)::bigint::text as ms',
      [postgresTimestamp(rfc3339)],
    );
    expect(Number(rows[0]!.ms)).toBe(new Date(rfc3339).getTime());
  });
});

describe('isoInstant', () => {
  it.each([
    ['2026-03-04T05:06:07.123Z', '2026-03-04T05:06:07.123Z'],
    ['2026-03-04T05:06:07Z', '2026-03-04T05:06:07.000Z'],
    ['2026-03-04T05:06:07.1Z', '2026-03-04T05:06:07.100Z'],
    ['2026-03-04T05:06:07.123456Z', '2026-03-04T05:06:07.123Z'],
    ['2026-03-04T05:06:07.123+01:00', '2026-03-04T04:06:07.123Z'],
    ['0000-06-01T12:00:00.000Z', '0000-06-01T12:00:00.000Z'],
    ['9999-12-31T23:59:59-23:59', '+010000-01-01T23:58:59.000Z'],
  ])('when the instant is written %s, then it is %s, as toISOString writes it', (value, iso) => {
    expect(isoInstant(value)).toBe(iso);
    expect(isoInstant(value)).toBe(new Date(value).toISOString());
  });
});
