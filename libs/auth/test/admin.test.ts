import { describe, expect, it } from '@jest/globals';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { errorHandler } from '@herald/errors';
import { parseServiceCallers, requireAdminToken, requireServiceCaller } from '../src/index.js';

async function status(authorization?: string) {
  const app = express();
  app.get('/admin', requireAdminToken('the-admin-token-0123456789'), (_req, res) => {
    res.sendStatus(204);
  });
  app.use(errorHandler({ error: () => {}, warn: () => {} }));
  const server = app.listen(0);
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/admin`, {
      headers: authorization ? { authorization } : {},
    });
    return res.status;
  } finally {
    server.close();
  }
}

describe('requireAdminToken', () => {
  it('when the token matches, then the route runs', async () => {
    expect(await status('Bearer the-admin-token-0123456789')).toBe(204);
  });

  it.each([
    [undefined],
    ['Bearer wrong'],
    ['Bearer the-admin-token-012345678'],
    ['the-admin-token-0123456789'],
  ])('when Authorization is %p, then 401', async (header) => {
    expect(await status(header)).toBe(401);
  });
});

describe('requireServiceCaller', () => {
  it('when the admin token is presented on an internal route, then 401', async () => {
    const app = express();
    const guard = requireServiceCaller(parseServiceCallers('events:the-service-token-0123456789'));
    app.get('/internal', guard.allow(['events']), (_req, res) => {
      res.sendStatus(204);
    });
    app.use(errorHandler({ error: () => {}, warn: () => {} }));
    const server = app.listen(0);
    await new Promise((r) => server.once('listening', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/internal`;
      const wrong = await fetch(url, {
        headers: { authorization: 'Bearer the-admin-token-0123456789' },
      });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="herald-internal"');
      const right = await fetch(url, {
        headers: { authorization: 'Bearer the-service-token-0123456789' },
      });
      expect(right.status).toBe(204);
    } finally {
      server.close();
    }
  });
});
