// The guard on failed token exchanges, through the ingress, with the production settings (per ClientID: 10 failures,
// then one more every 6 s; per client address: 30, then one every 2 s). Each test speaks from a
// loopback address of its own (127.x.y.z reaches the ingress on 127.0.0.1), which the ingress
// passes on as the client address, so no other test's address is touched.
import { randomInt } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { basic, exchangeFrom, newAddress, newKey, newTenant } from './support.js';

const CLIENT_BURST = 10;
const ADDRESS_BURST = 30;

describe('the token exchange guard through the ingress', () => {
  it('when one ClientID fails 10 times, then it is refused (429, no hashing) even with the right secret, and works again after Retry-After', async () => {
    const key = await newKey(await newTenant());
    const wrong = basic(key.clientId, 'sk_wrongwrongwrong');
    for (let i = 0; i < CLIENT_BURST; i += 1) {
      // A different address each time: only the ClientID's allowance is spent.
      expect((await exchangeFrom(newAddress(), wrong)).status).toBe(401);
    }
    const refused = await exchangeFrom(newAddress(), basic(key.clientId, key.secret!));
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(refused.retryAfter).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfter).toBeLessThanOrEqual(6);

    await new Promise((r) => setTimeout(r, refused.retryAfter! * 1000));
    expect((await exchangeFrom(newAddress(), basic(key.clientId, key.secret!))).status).toBe(200);
  });

  it('when one address fails 30 times with any ClientIDs, then it is refused, and other addresses are not', async () => {
    // Made first: made after the failures, it could take long enough on a busy machine for the
    // refill to give the address its next attempt back.
    const key = await newKey(await newTenant());
    const address = newAddress();
    let failed = 0;
    const started = performance.now();
    for (;;) {
      const clientId = `ck_unknown${failed}x${randomInt(1e9)}`;
      const { status } = await exchangeFrom(address, basic(clientId, 'sk_nope'));
      if (status === 429) break;
      expect(status).toBe(401);
      failed += 1;
      if (failed > 200) throw new Error('the address was never refused');
    }
    // The burst, plus what the refill (one every 2 s) gave back meanwhile.
    const elapsedS = (performance.now() - started) / 1000;
    expect(failed).toBeGreaterThanOrEqual(ADDRESS_BURST);
    expect(failed).toBeLessThanOrEqual(ADDRESS_BURST + Math.ceil(elapsedS / 2) + 1);

    const refused = await exchangeFrom(address, basic(key.clientId, key.secret!));
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBeGreaterThanOrEqual(1);
    expect((await exchangeFrom(newAddress(), basic(key.clientId, key.secret!))).status).toBe(200);
  });

  it('when a key exchanges correctly over and over, then the guard never counts it', async () => {
    const key = await newKey(await newTenant());
    const address = newAddress();
    for (let i = 0; i < CLIENT_BURST + 5; i += 1) {
      expect((await exchangeFrom(address, basic(key.clientId, key.secret!))).status).toBe(200);
    }
  });
});
