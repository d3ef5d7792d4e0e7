// The exchange guard: failed token exchanges are limited per ClientID and per client address before
// the slow hash runs; successful ones are not slowed and do not count.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { addressBucket } from '../../src/domain/exchange-guard.js';
import { basic, startAuthService, type TestAuthService } from '../support.js';

const LIMITS = {
  // One more attempt every 2 s: slower than three failing hashes on a busy machine.
  client: { burst: 3, refillPerSecond: 0.5 },
  // One more every 10 minutes: the address tests count seven answers, six of them hashes, which a
  // loaded machine may take longer than 2 s over; no test waits for an address's refill.
  address: { burst: 6, refillPerSecond: 1 / 600 },
};

let auth: TestAuthService;
let tenantId: string;

beforeAll(async () => {
  auth = await startAuthService({ guardLimits: LIMITS });
  tenantId = (await (await auth.admin('/tenants', { name: 'Guard Co' })).json()).id;
});
afterAll(() => auth.close());

const newKey = async (): Promise<{ clientId: string; secret: string }> =>
  (await auth.admin(`/tenants/${tenantId}/api-keys`, { kind: 'secret' })).json();

let nextAddress = 1;
/** A client address of its own (the in-process app trusts X-Forwarded-For from loopback). */
const newAddress = () => `203.0.113.${nextAddress++}`;

const exchange = (authorization: string, address: string) =>
  fetch(`${auth.url}/v1/token`, {
    method: 'POST',
    headers: { authorization, 'x-forwarded-for': address },
  });

describe('the token exchange guard', () => {
  it('when a ClientID fails its burst, then further attempts get 429 without hashing, the right secret included, until Retry-After has passed', async () => {
    const key = await newKey();
    const wrong = basic(key.clientId, 'sk_wrong');
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await exchange(wrong, newAddress())).status);
    expect(statuses).toEqual([401, 401, 401]);

    const hashesBefore = auth.hasher.verifications;
    const refused = await exchange(basic(key.clientId, key.secret), newAddress());
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ code: 'rate_limited', message: expect.any(String) });
    expect(auth.hasher.verifications).toBe(hashesBefore);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);

    await new Promise((r) => setTimeout(r, retryAfter * 1000));
    expect((await exchange(basic(key.clientId, key.secret), newAddress())).status).toBe(200);
  });

  it('when one address fails with many ClientIDs, then it is refused, and another address is not', async () => {
    const address = newAddress();
    const keys = await Promise.all(Array.from({ length: 7 }, () => newKey()));
    const statuses = [];
    for (const key of keys)
      statuses.push((await exchange(basic(key.clientId, 'sk_no'), address)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);

    const unknown = await exchange(basic('ck_doesnotexist', 'sk_no'), address);
    expect(unknown.status).toBe(429);
    const key = await newKey();
    expect((await exchange(basic(key.clientId, key.secret), newAddress())).status).toBe(200);
  });

  it('when one address fails with ClientIDs that cannot be ours (U+0000, over-long), then they count like wrong secrets', async () => {
    const address = newAddress();
    const statuses = [];
    for (let i = 0; i < 7; i += 1) {
      const clientId = i % 2 === 0 ? `ck_${i}\u0000` : `ck_${String(i).repeat(100)}`;
      statuses.push((await exchange(basic(clientId, 'sk_no'), address)).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
  });

  it('when failed attempts arrive all at once, then the bucket goes into debt and every later attempt waits for the refill to pay it back', async () => {
    const key = await newKey();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => exchange(basic(key.clientId, 'sk_wrong'), newAddress())),
    );
    expect(answers.every((r) => r.status === 401 || r.status === 429)).toBe(true);

    const hashesBefore = auth.hasher.verifications;
    const refused = await exchange(basic(key.clientId, key.secret), newAddress());
    expect(refused.status).toBe(429);
    expect(auth.hasher.verifications).toBe(hashesBefore);
    // Debt is capped at one burst (-3): four tokens short of one at 0.5/s is 8 s.
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(7);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(8);
  });

  it('when many correct exchanges of one key run at once, then none is refused', async () => {
    const key = await newKey();
    const address = newAddress();
    const answers = await Promise.all(
      Array.from({ length: 25 }, () => exchange(basic(key.clientId, key.secret), address)),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(25).fill(200));
  });

  it('when a publishable ClientID is sent with wrong passwords, then its browsers can still exchange (it has no bucket to lock)', async () => {
    const key: { clientId: string } = await (
      await auth.admin(`/tenants/${tenantId}/api-keys`, { kind: 'publishable' })
    ).json();
    for (let i = 0; i < 5; i += 1) {
      expect((await exchange(basic(key.clientId, 'x'), newAddress())).status).toBe(401);
    }
    expect((await exchange(basic(key.clientId, ''), newAddress())).status).toBe(200);
  });

  it('when a key exchanges successfully many times, then nothing is counted against it', async () => {
    const key = await newKey();
    const address = newAddress();
    for (let i = 0; i < 10; i += 1) {
      expect((await exchange(basic(key.clientId, key.secret), address)).status).toBe(200);
    }
  });
});

describe('the token exchange guard without Redis', () => {
  it('when Redis is unreachable, then exchanges still work (fail open)', async () => {
    const down = await startAuthService({ guardLimits: LIMITS, redisUrl: 'redis://127.0.0.1:9' });
    try {
      const t = (await (await down.admin('/tenants', { name: 'No Redis' })).json()).id;
      const key: { clientId: string; secret: string } = await (
        await down.admin(`/tenants/${t}/api-keys`, { kind: 'secret' })
      ).json();
      const res = await fetch(`${down.url}/v1/token`, {
        method: 'POST',
        headers: { authorization: basic(key.clientId, key.secret) },
      });
      expect(res.status).toBe(200);
    } finally {
      await down.close();
    }
  });
});

describe('addressBucket', () => {
  it('when the address is IPv4 or v4-mapped, then it is counted alone', () => {
    expect(addressBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('when the address is IPv6, then it is counted by its /64', () => {
    expect(addressBucket('2001:db8:0:1:aaaa::1')).toBe('2001:db8:0:1::/64');
    expect(addressBucket('2001:0DB8:0000:0001:ffff:ffff:ffff:ffff')).toBe('2001:db8:0:1::/64');
    expect(addressBucket('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
  });
});
