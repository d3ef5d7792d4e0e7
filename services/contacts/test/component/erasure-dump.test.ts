// Erasure leaves nothing: after the 204, no table of any database of the system holds the Contact's
// email, name, phone or externalId. Every Herald database is dumped with pg_dump and searched.
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DUMP_SEARCH_TIMEOUT_MS, searchHeraldDatabaseDumps } from '@herald/testing';
import { startContactsService, type TestContactsService } from '../support.js';

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService();
});
afterAll(() => svc.close());

describe('erasure leaves no trace in any database', () => {
  it(
    'when a Contact that was created and updated is erased, then no dump of any Herald database holds its email, name, phone or externalId',
    async () => {
      // Unique, recognisable values, so a match can only be this Contact.
      const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
      const digits = Array.from({ length: 12 }, () => randomInt(10)).join('');
      const traces = {
        email: `erasure-dump-${suffix}@example.com`,
        firstName: `Firstname Dump${suffix}`,
        name: `Lastname Dump${suffix}`,
        phone: `+49${digits}`,
        externalId: `erasure-dump-ext-${suffix}`,
      };
      const tenantId = randomUUID();
      const token = svc.tokenFor(tenantId, ['contacts:write', 'contacts:erase']);
      const put = (name: string) =>
        svc.request('PUT', `/v1/contacts/${traces.externalId}`, {
          token,
          body: { email: traces.email, name, phone: traces.phone, timeZone: 'Europe/Berlin' },
        });
      expect((await put(traces.firstName)).status).toBe(201);
      const updated = await put(traces.name);
      expect(updated.status).toBe(200);
      const { id } = await updated.json<{ id: string }>();

      // The search can fail: before the erasure, the dumps do hold every value.
      const before = await searchHeraldDatabaseDumps(Object.values(traces));
      expect(before.databases).toEqual(expect.arrayContaining(['herald_auth']));
      for (const value of Object.values(traces)) {
        expect({ value, databases: before.holding(value) }).toEqual({
          value,
          databases: expect.arrayContaining([expect.stringMatching(/^herald_contacts/)]),
        });
      }

      const erase = await svc.request('POST', `/v1/contacts/by-id/${id}/erase`, { token });
      expect(erase.status).toBe(204);

      const after = await searchHeraldDatabaseDumps([...Object.values(traces), id]);
      expect(after.databases.length).toBeGreaterThanOrEqual(2);
      for (const value of Object.values(traces)) {
        expect({ value, databases: after.holding(value) }).toEqual({ value, databases: [] });
      }
      // Only the bare id is kept, to answer the by-id retry.
      expect(after.holding(id).length).toBeGreaterThan(0);
    },
    DUMP_SEARCH_TIMEOUT_MS,
  );
});
