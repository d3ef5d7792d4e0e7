import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRevocationList } from '../src/index.js';

const SERVICE_TOKEN = 'service-token-for-revocation-tests';
let listed: string[] = [];
let failing = false;
const seenAuthorization: string[] = [];
let server: Server;
let authUrl: string;
const warnings: string[] = [];
const logger = { warn: (_obj: object, msg: string) => void warnings.push(msg) };

beforeAll(async () => {
  server = createServer((req, res) => {
    seenAuthorization.push(req.headers.authorization ?? '');
    if (failing || req.url !== '/internal/v1/revoked-keys') {
      res.statusCode = 503;
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ clientIds: listed }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  authUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
});

const until = async (check: () => boolean, timeoutMs = 3_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('createRevocationList', () => {
  it('when a key appears in the list, then it is revoked after the next poll, and the last list survives an auth outage', async () => {
    listed = ['ck_old'];
    const list = createRevocationList({
      authUrl,
      serviceToken: SERVICE_TOKEN,
      logger,
      intervalMs: 50,
    });
    try {
      await list.start();
      expect(list.isRevoked('ck_old')).toBe(true);
      expect(list.isRevoked('ck_new')).toBe(false);
      expect(seenAuthorization.at(-1)).toBe(`Bearer ${SERVICE_TOKEN}`);

      listed = ['ck_old', 'ck_new'];
      await until(() => list.isRevoked('ck_new'));

      failing = true;
      await until(() => warnings.some((w) => /keeping the last list/.test(w)));
      expect(list.isRevoked('ck_new')).toBe(true);
    } finally {
      failing = false;
      list.close();
    }
  });
});
