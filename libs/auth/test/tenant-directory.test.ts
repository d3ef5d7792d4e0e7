import { describe, expect, it } from '@jest/globals';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '@herald/errors';
import { authTenantDirectory } from '../src/index.js';

async function withAuth<T>(handler: RequestListener, fn: (url: string) => Promise<T>): Promise<T> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const TENANT = '6f1f1b8e-4f3a-4c57-9d55-0d3f1f2b8a10';

describe('authTenantDirectory', () => {
  it('when auth answers 200, then the tenant exists, asked with the service token', async () => {
    const seen: Array<{ url?: string; authorization?: string }> = [];
    const exists = await withAuth(
      (req, res) => {
        seen.push({ url: req.url, authorization: req.headers.authorization });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"x"}');
      },
      (authUrl) => authTenantDirectory({ authUrl, serviceToken: 'svc-token' })(TENANT),
    );
    expect(exists).toBe(true);
    expect(seen).toEqual([
      { url: `/internal/v1/tenants/${TENANT}`, authorization: 'Bearer svc-token' },
    ]);
  });

  it('when auth answers 404, then the tenant does not exist', async () => {
    const exists = await withAuth(
      (_req, res) => res.writeHead(404).end(),
      (authUrl) => authTenantDirectory({ authUrl, serviceToken: 's' })(TENANT),
    );
    expect(exists).toBe(false);
  });

  it('when auth answers 500, then a 503 service_unavailable, never a 404', async () => {
    const answer = withAuth(
      (_req, res) => res.writeHead(500).end(),
      (authUrl) => authTenantDirectory({ authUrl, serviceToken: 's' })(TENANT),
    );
    await expect(answer).rejects.toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it('when auth does not answer in time, then a 503 after the timeout', async () => {
    const started = Date.now();
    const answer = withAuth(
      () => {},
      (authUrl) => authTenantDirectory({ authUrl, serviceToken: 's', timeoutMs: 200 })(TENANT),
    );
    await expect(answer).rejects.toBeInstanceOf(AppError);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('when nothing listens, then a 503', async () => {
    const answer = authTenantDirectory({ authUrl: 'http://127.0.0.1:9', serviceToken: 's' })(
      TENANT,
    );
    await expect(answer).rejects.toMatchObject({ status: 503 });
  });
});
