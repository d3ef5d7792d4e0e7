// Lookups at the contacts service gathered per Tenant and turn of the event loop: pure logic, a
// stand-in resolver that records its calls.
import { describe, expect, test } from '@jest/globals';
import { coalescedIdentityResolver } from '../../src/identity-projection/coalesced-identity-resolver.js';
import type { IdentityQuery, IdentityResolver } from '../../src/recording/identities.js';

function recording(fail?: Error) {
  const calls: Array<{ tenantId: string; queries: IdentityQuery[] }> = [];
  const resolve: IdentityResolver = (tenantId, queries) => {
    calls.push({ tenantId, queries: [...queries] });
    if (fail) return Promise.reject(fail);
    // Answers name what was asked, so each request can check it got its own, in order.
    return Promise.resolve(
      queries.map((q) => ({
        contactId: `${tenantId}:${q.contactEmail}`,
        organizationExists: null,
      })),
    );
  };
  return { calls, resolve };
}

const ask = (...emails: string[]) => emails.map((contactEmail) => ({ contactEmail }));

describe('coalesced identity lookups', () => {
  test('when requests of one Tenant ask in the same turn, then one call carries them all, and each gets its own answers in order', async () => {
    const contacts = recording();
    const resolve = coalescedIdentityResolver(contacts.resolve);

    const [a, b] = await Promise.all([resolve('t1', ask('a1', 'a2')), resolve('t1', ask('b1'))]);

    expect(contacts.calls).toEqual([{ tenantId: 't1', queries: ask('a1', 'a2', 'b1') }]);
    expect(a.map((r) => r.contactId)).toEqual(['t1:a1', 't1:a2']);
    expect(b.map((r) => r.contactId)).toEqual(['t1:b1']);
  });

  test('when requests of two Tenants ask in the same turn, then each Tenant has its own call', async () => {
    const contacts = recording();
    const resolve = coalescedIdentityResolver(contacts.resolve);

    const [a, b] = await Promise.all([resolve('t1', ask('x')), resolve('t2', ask('x'))]);

    expect(contacts.calls).toEqual([
      { tenantId: 't1', queries: ask('x') },
      { tenantId: 't2', queries: ask('x') },
    ]);
    expect([a[0]?.contactId, b[0]?.contactId]).toEqual(['t1:x', 't2:x']);
  });

  test('when the queries of one turn pass the per-call limit, then they are split between requests, never inside one', async () => {
    const contacts = recording();
    const resolve = coalescedIdentityResolver(contacts.resolve, 3);

    await Promise.all([
      resolve('t1', ask('a1', 'a2')),
      resolve('t1', ask('b1', 'b2')),
      resolve('t1', ask('c1')),
    ]);

    expect(contacts.calls.map((c) => c.queries)).toEqual([ask('a1', 'a2'), ask('b1', 'b2', 'c1')]);
  });

  test('when the call fails, then every request in it fails with that error, and later turns call again', async () => {
    const unavailable = new Error('contacts unreachable');
    const failing = coalescedIdentityResolver(recording(unavailable).resolve);

    const outcomes = await Promise.allSettled([failing('t1', ask('a')), failing('t1', ask('b'))]);
    expect(outcomes.map((o) => o.status === 'rejected' && o.reason)).toEqual([
      unavailable,
      unavailable,
    ]);

    const contacts = recording();
    const resolve = coalescedIdentityResolver(contacts.resolve);
    await resolve('t1', ask('first'));
    await resolve('t1', ask('second'));
    expect(contacts.calls).toHaveLength(2);
  });

  test('when two calls are out, then lookups of later turns wait for one to come back and go together in one call', async () => {
    const calls: Array<{ queries: IdentityQuery[]; answer: () => void }> = [];
    const resolve = coalescedIdentityResolver((_tenantId, queries) => {
      return new Promise((done) => {
        calls.push({
          queries: [...queries],
          answer: () =>
            done(queries.map((q) => ({ contactId: q.contactEmail!, organizationExists: null }))),
        });
      });
    });
    const nextTurn = () => new Promise((resolveTurn) => setImmediate(resolveTurn));

    const first = resolve('t1', ask('a'));
    await nextTurn();
    const second = resolve('t1', ask('b'));
    await nextTurn();
    const third = resolve('t1', ask('c'));
    await nextTurn();
    const fourth = resolve('t1', ask('d'));
    await nextTurn();
    expect(calls.map((c) => c.queries)).toEqual([ask('a'), ask('b')]);

    calls[0]!.answer();
    expect((await first)[0]?.contactId).toBe('a');
    await nextTurn();
    expect(calls.map((c) => c.queries)).toEqual([ask('a'), ask('b'), ask('c', 'd')]);
    calls[1]!.answer();
    calls[2]!.answer();
    const answers = await Promise.all([second, third, fourth]);
    expect(answers.map((a) => a[0]?.contactId)).toEqual(['b', 'c', 'd']);
  });
});
