import { describe, expect, it } from '@jest/globals';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { runInNewContext } from 'node:vm';
import {
  AppError,
  SubscriptionSuspendedError,
  UnresolvedIdentityError,
  errorHandler,
  errors,
  isDependencyUnavailable,
  methodNotAllowed,
  notFoundHandler,
  toHttpError,
} from '../src/index.js';

const silent = { error: () => {}, warn: () => {} };

async function call(app: express.Express, method: string, path: string, body?: string) {
  const server = app.listen(0);
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as AddressInfo;
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      body,
      headers: body ? { 'content-type': 'application/json' } : {},
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  } finally {
    server.close();
  }
}

function appThrowing(err: unknown) {
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  app.route('/thing').get(() => {
    throw err;
  });
  app.get('/named/:id', (req, res) => {
    res.json({ id: req.params.id });
  });
  app
    .route('/only-post')
    .post((_req, res) => res.sendStatus(204))
    .all(methodNotAllowed(['POST']));
  app.use(notFoundHandler);
  app.use(errorHandler(silent));
  return app;
}

describe('error bodies', () => {
  it('when an AppError is thrown, then the body is exactly {code, message} with its headers', async () => {
    const res = await call(appThrowing(errors.rateLimited(0.2)), 'GET', '/thing');
    expect(res.status).toBe(429);
    expect(JSON.parse(res.text)).toEqual({ code: 'rate_limited', message: expect.any(String) });
    expect(res.headers.get('retry-after')).toBe('1');
  });

  it('when the subscription is suspended, then the body is problem details with its media type', async () => {
    const res = await call(appThrowing(new SubscriptionSuspendedError()), 'GET', '/thing');
    expect(res.status).toBe(402);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(res.text)).toEqual({
      type: 'subscription_suspended',
      title: expect.any(String),
      status: 402,
      detail: expect.any(String),
    });
  });

  it('when identities are unresolved, then the 422 body lists them in order', async () => {
    const item = {
      index: 1,
      eventName: 'signed_up',
      contactId: null,
      contactExternalId: 'u-1',
      contactEmail: null,
      organizationExternalId: null,
    };
    const res = await call(appThrowing(new UnresolvedIdentityError([item])), 'GET', '/thing');
    expect(res.status).toBe(422);
    expect(JSON.parse(res.text)).toEqual({
      code: 'unresolved_identity',
      message: expect.any(String),
      unresolved: [item],
    });
  });

  it('when an unknown error is thrown, then the answer is a bare 500 without a stack trace', async () => {
    const res = await call(
      appThrowing(new Error('secret internals at /srv/app.js:12')),
      'GET',
      '/thing',
    );
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual({ code: 'internal_error', message: 'internal error' });
    expect(res.text).not.toContain('/srv/app.js');
  });

  it('when the database refuses connections, then the answer is 503 with Retry-After', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
      code: 'ECONNREFUSED',
    });
    const res = await call(appThrowing(refused), 'GET', '/thing');
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text).code).toBe('service_unavailable');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it("when the refused connection is an error of another realm (as Node's own are, seen from a vm context), then it is still 503", async () => {
    const foreign = runInNewContext(
      'Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" })',
    ) as Error;
    expect(foreign instanceof Error).toBe(false);
    const res = await call(appThrowing(foreign), 'GET', '/thing');
    expect(res.status).toBe(503);
  });

  it('when no route matches, then 404 not_found', async () => {
    const res = await call(appThrowing(null), 'GET', '/v2/nothing');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text).code).toBe('not_found');
  });

  it('when the method is wrong on a known path, then 405 with Allow', async () => {
    const res = await call(appThrowing(null), 'GET', '/only-post');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(JSON.parse(res.text).code).toBe('method_not_allowed');
  });

  it('when the JSON body is malformed, then 400 validation_error', async () => {
    const res = await call(appThrowing(null), 'POST', '/only-post', '{"a":');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).code).toBe('validation_error');
  });

  it('when a path parameter has malformed percent-encoding, then 400 validation_error, not 500', async () => {
    const res = await call(appThrowing(null), 'GET', '/named/%E0%A4');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'validation_error' });
    expect(JSON.parse((await call(appThrowing(null), 'GET', '/named/a%2Fb')).text)).toEqual({
      id: 'a/b',
    });
  });

  it('when the body claims an encoding it does not have, then 400 validation_error, not 500', async () => {
    const app = appThrowing(null);
    const server = app.listen(0);
    await new Promise((r) => server.once('listening', r));
    try {
      const res = await fetch(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/only-post`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          body: '{"not":"gzipped"}',
        },
      );
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'validation_error' });
    } finally {
      server.close();
    }
  });

  it('when the body is over 1 MiB, then 413 payload_too_large', async () => {
    const big = JSON.stringify({ a: 'x'.repeat(1024 * 1024) });
    const res = await call(appThrowing(null), 'POST', '/only-post', big);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text).code).toBe('payload_too_large');
  });
});

describe('isDependencyUnavailable', () => {
  it.each([
    [Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), true],
    [Object.assign(new Error('terminating connection'), { code: '57P01' }), true],
    [Object.assign(new Error('x'), { code: '08006' }), true],
    [
      Object.assign(new Error('could not extend file: No space left on device'), { code: '53100' }),
      true,
    ],
    [Object.assign(new Error('sorry, too many clients already'), { code: '53300' }), true],
    [new Error('timeout exceeded when trying to connect'), true],
    [new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'ETIMEDOUT' }) }), true],
    [Object.assign(new Error('duplicate key'), { code: '23505' }), false],
    [new Error('boom'), false],
    ['not an error', false],
  ])('classifies %p as %p', (err, expected) => {
    expect(isDependencyUnavailable(err)).toBe(expected);
  });

  it('keeps AppErrors as they are', () => {
    const err = new AppError('nope', { code: 'conflict', status: 409 });
    expect(toHttpError(err)).toBe(err);
  });
});
