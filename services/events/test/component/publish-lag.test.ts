// The lag recording's pace reads (unit/publish-pace.test.ts), as read from a real outbox: how
// long its oldest unpublished message has waited.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { oldestPendingSeconds } from '@herald/outbox';
import { prepareTestDatabase, testPool } from '../contact-data-support.js';

const DATABASE = 'herald_events_test_publish_pace';

describe('oldestPendingSeconds against the events outbox', () => {
  const pool = testPool(DATABASE, 2);
  beforeAll(async () => {
    await prepareTestDatabase(DATABASE);
    await pool.query('delete from outbox');
  });
  afterAll(() => pool.end());

  it('when the outbox is empty, then 0; else how long its first row has waited', async () => {
    expect(await oldestPendingSeconds(pool)).toBe(0);
    await pool.query(
      `insert into outbox (topic, key, value, created_at)
       values ('t', 'k', '{}', now() - interval '2 seconds'), ('t', 'k', '{}', now())`,
    );
    const waited = await oldestPendingSeconds(pool);
    expect(waited).toBeGreaterThanOrEqual(2);
    expect(waited).toBeLessThan(10);
    await pool.query('delete from outbox');
    expect(await oldestPendingSeconds(pool)).toBe(0);
  });
});
