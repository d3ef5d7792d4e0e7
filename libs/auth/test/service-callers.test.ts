// The internal routes' guard: each Herald process presents its own token, and a route lets in
// only the callers its manifest names. 401 for a token no caller has, 403 for a known caller
// the route does not name; several tokens per caller, so a rotation can overlap.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, secret, z } from '@herald/config';
import { errorHandler } from '@herald/errors';
import {
  adminTokenEnv,
  parseServiceCallers,
  refuseSharedTokens,
  requireServiceCaller,
  serviceCallersEnv,
  serviceTokenEnv,
  tokenDigest,
} from '../src/index.js';

const CONTACTS = 'contacts-token-0123456789abcdef';
const CONTACTS_NEXT = 'contacts-next-token-0123456789abcdef';
const EVENTS = 'events-token-0123456789abcdef';
const BILLING = 'billing-token-0123456789abcdef';
const ADMIN = 'admin-token-0123456789abcdef';
const sha256 = (token: string) => `sha256:${tokenDigest(token).toString('hex')}`;

let server: Server;
let base: string;

beforeAll(async () => {
  // As a service mounts its internal routes: the prefix identifies, each route allows.
  const guard = requireServiceCaller(
    parseServiceCallers(
      `contacts:${CONTACTS}, contacts:${CONTACTS_NEXT},events:${EVENTS},billing:${sha256(BILLING)}`,
    ),
  );
  const app = express();
  app.use('/internal', guard.authenticate);
  app.get('/internal/v1/both', guard.allow(['contacts', 'events']), (_req, res) => {
    res.sendStatus(204);
  });
  app.get('/internal/v1/contacts-only', guard.allow(['contacts']), (_req, res) => {
    res.sendStatus(204);
  });
  app.get('/unprefixed', guard.allow(['billing']), (_req, res) => {
    res.sendStatus(204);
  });
  app.use(errorHandler({ error: () => {}, warn: () => {} }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

const call = (path: string, token?: string) =>
  fetch(`${base}${path}`, { headers: token === undefined ? {} : { authorization: token } });

describe('requireServiceCaller', () => {
  it('when a caller the route names presents its token, then the route runs', async () => {
    expect((await call('/internal/v1/both', `Bearer ${CONTACTS}`)).status).toBe(204);
    expect((await call('/internal/v1/both', `Bearer ${EVENTS}`)).status).toBe(204);
    expect((await call('/internal/v1/contacts-only', `Bearer ${CONTACTS}`)).status).toBe(204);
  });

  it('when a caller has two tokens (a rotation), then both are accepted', async () => {
    expect((await call('/internal/v1/contacts-only', `Bearer ${CONTACTS}`)).status).toBe(204);
    expect((await call('/internal/v1/contacts-only', `Bearer ${CONTACTS_NEXT}`)).status).toBe(204);
  });

  it('when a token is listed by its sha256, then its caller is known by it', async () => {
    expect((await call('/unprefixed', `Bearer ${BILLING}`)).status).toBe(204);
    // The digest itself is not a token.
    expect((await call('/unprefixed', `Bearer ${sha256(BILLING)}`)).status).toBe(401);
  });

  it.each([
    ['no Authorization', undefined],
    ['an unknown token', 'Bearer not-a-token-of-any-caller-0123456789'],
    ['the admin token', `Bearer ${ADMIN}`],
    ['a known token without Bearer', CONTACTS],
    ['a known token with a character missing', `Bearer ${CONTACTS.slice(0, -1)}`],
  ])(
    'when the request has %s, then 401 unauthenticated in the documented format',
    async (_what, header) => {
      for (const path of ['/internal/v1/both', '/internal/v1/unknown', '/unprefixed']) {
        const res = await call(path, header);
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="herald-internal"');
        expect(await res.json()).toEqual({
          code: 'unauthenticated',
          message: 'missing or wrong service token',
        });
      }
    },
  );

  it('when a known caller calls a route that does not name it, then 403 forbidden naming it', async () => {
    const res = await call('/internal/v1/contacts-only', `Bearer ${EVENTS}`);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      code: 'forbidden',
      message: 'events may not call GET /internal/v1/contacts-only',
    });
    expect((await call('/internal/v1/both', `Bearer ${BILLING}`)).status).toBe(403);
    expect((await call('/unprefixed', `Bearer ${CONTACTS_NEXT}`)).status).toBe(403);
  });

  it('when a known caller asks for a path under the prefix that names no route, then 404', async () => {
    expect((await call('/internal/v1/unknown', `Bearer ${EVENTS}`)).status).toBe(404);
  });
});

describe('parseServiceCallers', () => {
  it('reads name:token entries, a name several times, tokens as themselves or as sha256', () => {
    const callers = parseServiceCallers(
      ` contacts:${CONTACTS},events:${sha256(EVENTS)},, contacts:${CONTACTS_NEXT} `,
    );
    expect(callers.names()).toEqual(['contacts', 'events']);
    expect(callers.identify(CONTACTS)).toBe('contacts');
    expect(callers.identify(CONTACTS_NEXT)).toBe('contacts');
    expect(callers.identify(EVENTS)).toBe('events');
    expect(callers.identify(BILLING)).toBeUndefined();
    expect(parseServiceCallers('').names()).toEqual([]);
  });

  it.each([
    ['an entry without a name', CONTACTS, /entry 1 is not name:token/],
    ['a name that is no process name', `Contacts:${CONTACTS}`, /entry 1: the caller's name/],
    ['a short token', 'contacts:short', /entry 1 \(contacts\): the token must be at least 24/],
    ['a malformed digest', 'contacts:sha256:abc', /sha256: must be followed by 64/],
    [
      'one token for two callers',
      `contacts:${CONTACTS},events:${CONTACTS}`,
      /entry 2: events has the same token as contacts; every caller needs its own/,
    ],
    [
      'one token for two callers, once by its digest',
      `contacts:${CONTACTS},events:${sha256(CONTACTS)}`,
      /events has the same token as contacts/,
    ],
  ])('refuses %s, without showing the token', (_what, text, message) => {
    let error: Error | undefined;
    try {
      parseServiceCallers(text);
    } catch (err) {
      error = err as Error;
    }
    expect(error?.message).toMatch(message);
    expect(error?.message).not.toContain(CONTACTS);
  });
});

describe('a service config with the access secrets', () => {
  const schema = z
    .object({
      ...adminTokenEnv,
      ...serviceTokenEnv,
      ...serviceCallersEnv,
      OTHER_SECRET: secret(8).optional(),
    })
    .superRefine(refuseSharedTokens);
  const load = (env: Record<string, string>) => loadConfig(schema, env);
  const valid = {
    ADMIN_TOKEN: ADMIN,
    SERVICE_TOKEN: EVENTS,
    SERVICE_CALLERS: `contacts:${CONTACTS},billing:${BILLING}`,
  };

  it('when every token is its own, then the config holds them, the callers parsed', () => {
    const config = load(valid);
    expect(config.SERVICE_TOKEN).toBe(EVENTS);
    expect(config.SERVICE_CALLERS.identify(BILLING)).toBe('billing');
  });

  it('when ADMIN_TOKEN equals SERVICE_TOKEN, then the service refuses to start', () => {
    expect(() => load({ ...valid, ADMIN_TOKEN: EVENTS })).toThrow(
      'ADMIN_TOKEN: must differ from SERVICE_TOKEN: the operator and service tokens are separate secrets (got a value that does not fit)',
    );
  });

  it.each([
    ['as itself', `contacts:${ADMIN}`],
    ['by its sha256', `billing:${BILLING},contacts:${sha256(ADMIN)}`],
  ])(
    'when ADMIN_TOKEN is a caller token in SERVICE_CALLERS (%s), then the service refuses to start',
    (_how, callers) => {
      expect(() => load({ ...valid, SERVICE_CALLERS: callers })).toThrow(
        "ADMIN_TOKEN: must differ from every token in SERVICE_CALLERS (it equals one of contacts's)",
      );
    },
  );

  it('when a token is shorter than 24 characters, then the service refuses to start', () => {
    expect(() => load({ ...valid, SERVICE_TOKEN: 'x'.repeat(23) })).toThrow(
      'SERVICE_TOKEN: must be at least 24 characters',
    );
    expect(() => load({ ...valid, SERVICE_CALLERS: 'contacts:x' })).toThrow(
      /SERVICE_CALLERS: entry 1 \(contacts\): the token must be at least 24 characters/,
    );
  });

  it('when SERVICE_CALLERS is unset, then no process may call the internal routes', () => {
    expect(load({ ADMIN_TOKEN: ADMIN, SERVICE_TOKEN: EVENTS }).SERVICE_CALLERS.names()).toEqual([]);
  });
});
