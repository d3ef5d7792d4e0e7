import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { billingSubscriptions } from '../src/index.js';

// A stand-in for the billing service's internal route (its real one is tested in
// services/billing and end to end).
let answer: { status: number; body?: object } = { status: 200 };
let calls = 0;
let server: Server;
let billingUrl: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    calls += 1;
    expect(req.headers.authorization).toBe('Bearer service-token');
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body ?? {}));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  billingUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
});

describe('billingSubscriptions', () => {
  it('when billing answers, then its snapshot; when it then fails, the last answer holds and billing is left alone for a second', async () => {
    const source = billingSubscriptions({ billingUrl, serviceToken: 'service-token', cacheMs: 0 });
    answer = { status: 200, body: { state: 'suspended', consecutiveFailures: 3, version: 3 } };
    const suspended = { state: 'suspended', consecutiveFailures: 3, version: 3 };
    expect(await source.fetch('t1')).toEqual(suspended);

    answer = { status: 503 };
    const before = calls;
    expect(await source.fetch('t1')).toEqual(suspended);
    expect(await source.fetch('t1')).toEqual(suspended);
    expect(await source.fetch('t2')).toBeNull();
    expect(calls).toBe(before + 1);
  });

  it('when a remembered answer may do, then billing is asked at most once per cacheMs', async () => {
    const source = billingSubscriptions({ billingUrl, serviceToken: 'service-token' });
    answer = { status: 200, body: { state: 'active', consecutiveFailures: 0, version: 0 } };
    const before = calls;
    await source.fetch('t3', { allowRemembered: true });
    await source.fetch('t3', { allowRemembered: true });
    expect(calls).toBe(before + 1);
    await source.fetch('t3');
    expect(calls).toBe(before + 2);
  });
});
