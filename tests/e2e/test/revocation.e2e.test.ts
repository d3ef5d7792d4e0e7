// Revocation: a revoked key can no longer exchange, and the tokens already issued for it stop
// working on every service within 5 seconds.
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { admin, basic, call, exchange, expectError, newKey, newTenant } from './support.js';

const DEADLINE_MS = 5_000;

describe('revoking an API key', () => {
  it('when a key is revoked, then it cannot exchange at once and its live tokens get 401 on contacts and events within 5 s', async () => {
    const tenantId = await newTenant();
    const key = await newKey(tenantId, {
      kind: 'secret',
      scopes: ['contacts:read', 'events:write'],
    });
    const other = await newKey(tenantId, { kind: 'secret', scopes: ['contacts:read'] });
    const tokenOf = async (k: { clientId: string; secret?: string }) =>
      (await (await exchange(basic(k.clientId, k.secret!))).json<{ accessToken: string }>())
        .accessToken;
    const token = await tokenOf(key);
    const otherToken = await tokenOf(other);
    const read = (t: string) => call('GET', `/v1/contacts/by-id/${randomUUID()}`, t);
    const record = (t: string) =>
      call('POST', '/v1/events/by-contact-id', t, {
        contactId: randomUUID(),
        eventName: 'x',
        occurredAt: '2026-03-01T10:00:00.000Z',
      });
    expect((await read(token)).status).toBe(404);
    expect((await record(token)).status).toBe(422);

    const revokedAt = performance.now();
    expect(
      (await admin('POST', `/tenants/${tenantId}/api-keys/${key.clientId}/revoke`)).status,
    ).toBe(204);
    await expectError(await exchange(basic(key.clientId, key.secret!)), 401, 'invalid_client');

    const refusedWithin = async (send: () => Promise<Response>) => {
      for (;;) {
        const res = await send();
        if (res.status === 401) {
          await expectError(res, 401, 'unauthenticated');
          return performance.now() - revokedAt;
        }
        // Still accepted: the missing Contact's 404, the unknown Contact's 422.
        expect([404, 422]).toContain(res.status);
        if (performance.now() - revokedAt > DEADLINE_MS) {
          throw new Error(`still answered ${res.status} ${DEADLINE_MS} ms after the revocation`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const [contactsMs, eventsMs] = await Promise.all([
      refusedWithin(() => read(token)),
      refusedWithin(() => record(token)),
    ]);
    expect(Math.max(contactsMs, eventsMs)).toBeLessThanOrEqual(DEADLINE_MS);

    // The Tenant's other key is untouched.
    expect((await read(otherToken)).status).toBe(404);
  });
});
