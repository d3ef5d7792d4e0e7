// The client against a scripted fetch: which answers are resent and how, the dedupKeys, the
// token cache (one exchange shared by concurrent callers, one renewal after a 401) and the
// typed errors. The integration tests repeat what matters against the real stack.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import {
  ConnectionError,
  HeraldClient,
  HeraldError,
  RateLimitedError,
  SuspendedError,
  UnresolvedIdentityError,
  type HeraldClientOptions,
} from '../../src/index.js';
import { send, type Transport } from '../../src/http.js';
import { SDK_VERSION } from '../../src/version.js';
import { fakeFetch, hang, json, tokenAnswer, type Handler } from '../fake-fetch.js';

const BASE = 'https://herald.test';
const event = {
  contactExternalId: 'user-1',
  eventName: 'Signed Up',
  occurredAt: '2026-01-01T00:00:00Z',
};
const byId = { eventName: 'Signed Up', occurredAt: '2026-01-01T00:00:00Z' };
const CONTACT_ID = '0b5e7d2c-1f4e-4c6b-9a51-3a0f0e2d9c11';

/** A client whose token exchange answers `tok-N` and whose other requests go to `handler`. */
function clientWith(handler: Handler, options: Partial<HeraldClientOptions> = {}) {
  let exchanges = 0;
  const fake = fakeFetch((request, index) => {
    if (request.url.endsWith('/v1/token')) return tokenAnswer(`tok-${++exchanges}`);
    return handler(request, index);
  });
  const client = new HeraldClient({
    baseUrl: BASE,
    clientId: 'ck_test',
    secret: 'sk_test',
    fetch: fake.fetch,
    baseDelayMs: 1,
    maxDelayMs: 5,
    ...options,
  } as HeraldClientOptions);
  const calls = () => fake.sent.filter((r) => !r.url.endsWith('/v1/token'));
  return { client, sent: fake.sent, calls, exchanges: () => exchanges };
}

describe('Events: dedupKeys and resends', () => {
  it('when an Event has no dedupKey, then it gets one before the first attempt and every resend carries the same bytes', async () => {
    let n = 0;
    const { client, calls } = clientWith(() =>
      ++n < 3
        ? n === 1
          ? 'network-error'
          : json(503, { code: 'service_unavailable', message: 'x' }, { 'retry-after': '0' })
        : json(202, { accepted: 2 }),
    );
    const answer = await client.events.byExternalId([event, { ...event, dedupKey: 'mine' }]);
    expect(answer).toStrictEqual({ accepted: 2 });
    const bodies = calls().map((r) => r.body);
    expect(bodies).toHaveLength(3);
    expect(new Set(bodies).size).toBe(1);
    const sent = JSON.parse(bodies[0]!);
    expect(sent[0].dedupKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[1].dedupKey).toBe('mine');
    expect(calls()[0]!.url).toBe(`${BASE}/v1/events/by-external-id`);
    expect(calls()[0]!.headers['content-type']).toBe('application/json');
    expect(calls()[0]!.headers.authorization).toBe('Bearer tok-1');
  });

  it('when the caller passes an Event object, then the object is left as it was (the key is on the copy sent)', async () => {
    const { client, calls } = clientWith(() => json(202, { accepted: 1 }));
    const mine = { ...event };
    await client.events.byExternalId(mine);
    expect(mine).toStrictEqual(event);
    expect(JSON.parse(calls()[0]!.body!).dedupKey).toBeDefined();
  });

  it('when occurredAt is a Date, then it is sent as RFC 3339 in UTC', async () => {
    const { client, calls } = clientWith(() => json(202, { accepted: 1 }));
    await client.events.byEmail({
      contactEmail: 'a@example.com',
      eventName: 'x',
      occurredAt: new Date('2026-03-04T05:06:07.123Z'),
    });
    expect(JSON.parse(calls()[0]!.body!).occurredAt).toBe('2026-03-04T05:06:07.123Z');
  });

  it.each([400, 402, 403, 404, 409, 413, 422])(
    'when the answer is %d, then the request is not resent',
    async (status) => {
      const body =
        status === 402
          ? { type: 'subscription_suspended', title: 't', status: 402, detail: 'suspended' }
          : status === 422
            ? { code: 'unresolved_identity', message: 'm', unresolved: [] }
            : { code: `code_${status}`, message: 'm' };
      const { client, calls } = clientWith(() => json(status, body));
      const error = await client.events.byContactId({ ...event, contactId: 'c' }).catch((e) => e);
      expect(error).toBeInstanceOf(HeraldError);
      expect(error.status).toBe(status);
      expect(error.attempts).toBe(1);
      expect(calls()).toHaveLength(1);
    },
  );

  it('when every answer is a 5xx, then it gives up after maxAttempts with the last error', async () => {
    const { client, calls } = clientWith(
      () => json(500, { code: 'internal_error', message: 'boom' }),
      {
        maxAttempts: 3,
      },
    );
    const error = await client.events.byExternalId(event).catch((e) => e);
    expect(error).toBeInstanceOf(HeraldError);
    expect(error).toMatchObject({
      status: 500,
      code: 'internal_error',
      attempts: 3,
      requestId: 'rid-500',
    });
    expect(calls()).toHaveLength(3);
  });

  it('when no answer comes within timeoutMs, then the attempt is abandoned and resent', async () => {
    const { client, calls } = clientWith(
      (request, index) => (index === 1 ? hang(request.signal) : json(202, { accepted: 1 })),
      { timeoutMs: 50 },
    );
    expect(await client.events.byExternalId(event)).toStrictEqual({ accepted: 1 });
    expect(calls()).toHaveLength(2);
    expect(calls()[0]!.body).toBe(calls()[1]!.body);
  });

  it('when the connection keeps failing, then a ConnectionError says so after the attempts', async () => {
    const { client } = clientWith(() => 'network-error', { maxAttempts: 2 });
    const error = await client.events.byExternalId(event).catch((e) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ code: 'network_error', status: null, attempts: 2 });
  });

  it('when Retry-After asks for more than the deadline leaves, then it gives up at once with the wait', async () => {
    const { client, calls } = clientWith(
      () => json(429, { code: 'rate_limited', message: 'slow down' }, { 'retry-after': '30' }),
      { deadlineMs: 5_000 },
    );
    const error = await client.events.byExternalId(event).catch((e) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfterMs).toBe(30_000);
    expect(error.requestId).toBe('rid-429');
    expect(calls()).toHaveLength(1);
  });

  it('when a 429 says Retry-After 0, then the request is resent and passes', async () => {
    let n = 0;
    const { client, calls } = clientWith(() =>
      ++n <= 2
        ? json(429, { code: 'rate_limited', message: 'm' }, { 'retry-after': '0' })
        : json(202, { accepted: 1 }),
    );
    expect(await client.events.byExternalId(event)).toStrictEqual({ accepted: 1 });
    expect(calls()).toHaveLength(3);
  });

  it('when the array is empty or over 1,000, then nothing is sent', async () => {
    const { client, sent } = clientWith(() => json(202, { accepted: 1 }));
    await expect(client.events.byExternalId([])).rejects.toThrow(RangeError);
    await expect(client.events.byExternalId(Array(1001).fill(event))).rejects.toThrow(RangeError);
    expect(sent).toHaveLength(0);
  });

  it('when the answer is a 422, then the error lists the unresolved items and the Events as sent', async () => {
    const item = {
      index: 1,
      eventName: 'Signed Up',
      contactId: null,
      contactExternalId: 'nobody',
      contactEmail: null,
      organizationExternalId: null,
    };
    const { client } = clientWith(() =>
      json(422, { code: 'unresolved_identity', message: 'm', unresolved: [item] }),
    );
    const error = await client.events
      .byExternalId([event, { ...event, contactExternalId: 'nobody' }])
      .catch((e) => e);
    expect(error).toBeInstanceOf(UnresolvedIdentityError);
    expect(error.unresolved).toStrictEqual([item]);
    expect(error.events).toHaveLength(2);
    expect(error.events[1].dedupKey).toEqual(expect.any(String));
  });

  it('when the answer is a 402 problem, then a SuspendedError carries its detail', async () => {
    const { client } = clientWith(
      () =>
        new Response(
          JSON.stringify({
            type: 'subscription_suspended',
            title: 'S',
            status: 402,
            detail: 'read-only',
          }),
          {
            status: 402,
            headers: { 'content-type': 'application/problem+json', 'x-request-id': 'r402' },
          },
        ),
    );
    const error = await client.contacts.upsertByEmail({ email: 'a@example.com' }).catch((e) => e);
    expect(error).toBeInstanceOf(SuspendedError);
    expect(error).toMatchObject({
      code: 'subscription_suspended',
      status: 402,
      requestId: 'r402',
      message: 'read-only',
    });
  });
});

describe('the access token', () => {
  it('when many calls start at once, then the key is exchanged once and the token shared', async () => {
    const { client, exchanges, calls } = clientWith(() => json(202, { accepted: 1 }));
    await Promise.all(Array.from({ length: 20 }, () => client.events.byExternalId(event)));
    expect(exchanges()).toBe(1);
    expect(new Set(calls().map((r) => r.headers.authorization))).toStrictEqual(
      new Set(['Bearer tok-1']),
    );
  });

  it('when the exchange is sent, then it is HTTP Basic ClientID:secret and no body', async () => {
    const { client, sent } = clientWith(() => json(202, { accepted: 1 }));
    await client.events.byExternalId(event);
    expect(sent[0]!.method).toBe('POST');
    expect(sent[0]!.headers.authorization).toBe(`Basic ${btoa('ck_test:sk_test')}`);
    expect(sent[0]!.body).toBeUndefined();
  });

  it('when the key is publishable, then the Contact methods throw insufficient_scope without sending', async () => {
    const { client, sent } = clientWith(() => json(200, {}), {
      clientId: undefined,
      secret: undefined,
      publishableKey: 'pk_abc',
    });
    await expect(client.contacts.get('a')).rejects.toMatchObject({
      code: 'insufficient_scope',
      status: null,
    });
    await expect(client.contacts.upsert('a', { email: 'a@b.c' })).rejects.toMatchObject({
      code: 'insufficient_scope',
    });
    await expect(client.contacts.upsertByEmail({ email: 'a@b.c' })).rejects.toMatchObject({
      code: 'insufficient_scope',
    });
    await expect(client.contacts.erase('a')).rejects.toMatchObject({ code: 'insufficient_scope' });
    await expect(client.contacts.exportById('a').next()).rejects.toMatchObject({
      code: 'insufficient_scope',
    });
    expect(sent).toHaveLength(0);
  });

  it('when the key is publishable, then it is exchanged with an empty password', async () => {
    const { client, sent } = clientWith(() => json(202, { accepted: 1 }), {
      clientId: undefined,
      secret: undefined,
      publishableKey: 'pk_abc',
    });
    await client.events.byContactId({ ...byId, contactId: CONTACT_ID });
    expect(sent[0]!.headers.authorization).toBe(`Basic ${btoa('pk_abc:')}`);
  });

  it('when a publishable key without identifierLookup names a Contact by identifier or an organization, then forbidden without sending', async () => {
    const { client, sent } = clientWith(() => json(202, { accepted: 1 }), {
      clientId: undefined,
      secret: undefined,
      publishableKey: 'pk_abc',
    });
    const refusals = [
      client.events.byExternalId(event),
      client.events.byEmail({ ...byId, contactEmail: 'a@b.c' }),
      client.events.byOrganization({ ...byId, organizationExternalId: 'org-1' }),
      client.events.byContactId([
        { ...byId, contactId: CONTACT_ID },
        { ...byId, contactId: CONTACT_ID, organizationExternalId: 'org-1' },
      ]),
    ];
    for (const refusal of refusals) {
      await expect(refusal).rejects.toMatchObject({ code: 'forbidden', status: null, attempts: 0 });
    }
    expect(sent).toHaveLength(0);
  });

  it('when a publishable key has identifierLookup, then every route is sent', async () => {
    const { client, calls } = clientWith(() => json(202, { accepted: 1 }), {
      clientId: undefined,
      secret: undefined,
      publishableKey: 'pk_abc',
      identifierLookup: true,
    });
    await client.events.byExternalId(event);
    await client.events.byEmail({ ...byId, contactEmail: 'a@b.c' });
    expect(calls()).toHaveLength(2);
  });

  it('when concurrent calls all get a 401, then the token is renewed once and each is resent once', async () => {
    const { client, exchanges, calls } = clientWith((request) =>
      request.headers.authorization === 'Bearer tok-1'
        ? json(401, { code: 'unauthenticated', message: 'expired' })
        : json(202, { accepted: 1 }),
    );
    await client.events.byExternalId(event); // tok-1 is refused, tok-2 passes
    expect(exchanges()).toBe(2);
    await Promise.all(Array.from({ length: 10 }, () => client.events.byExternalId(event)));
    expect(exchanges()).toBe(2);
    expect(calls().filter((r) => r.headers.authorization === 'Bearer tok-1')).toHaveLength(1);
  });

  it('when 401s arrive together for the same token, then one exchange serves them all', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let refused = 0;
    const { client, exchanges } = clientWith(async (request) => {
      if (request.headers.authorization === 'Bearer tok-1') {
        refused += 1;
        if (refused === 10) release();
        await gate; // every call holds tok-1 before the first 401 comes back
        return json(401, { code: 'unauthenticated', message: 'expired' });
      }
      return json(202, { accepted: 1 });
    });
    await Promise.all(Array.from({ length: 10 }, () => client.events.byExternalId(event)));
    expect(exchanges()).toBe(2);
  });

  it('when the renewed token is refused too, then the call fails with the 401 (the key is revoked)', async () => {
    const { client, exchanges } = clientWith(() =>
      json(401, { code: 'unauthenticated', message: 'revoked' }),
    );
    const error = await client.contacts.get('x').catch((e) => e);
    expect(error).toMatchObject({ status: 401, code: 'unauthenticated', attempts: 2 });
    expect(exchanges()).toBe(2);
  });

  it('when the token is within the margin of its expiry, then it is replaced before use', async () => {
    let clock = 0;
    let exchanged = 0;
    const fake = fakeFetch((request) =>
      request.url.endsWith('/v1/token')
        ? tokenAnswer(`tok-${++exchanged}`, 900)
        : json(200, { id: 'c', email: 'a@example.com', createdAt: 'x', updatedAt: 'x' }),
    );
    const client = new HeraldClient({
      baseUrl: BASE,
      clientId: 'ck_x',
      secret: 'sk_x',
      fetch: fake.fetch,
    });
    client.transport.now = () => clock;
    await client.contacts.get('a');
    clock = 839_000; // 61 s before expiry
    await client.contacts.get('a');
    expect(exchanged).toBe(1);
    clock = 841_000; // 59 s before expiry: inside the 60 s margin
    await client.contacts.get('a');
    expect(exchanged).toBe(2);
    expect(fake.sent.at(-1)!.headers.authorization).toBe('Bearer tok-2');
  });

  it('when the key is wrong, then invalid_client is final', async () => {
    const fake = fakeFetch(() => json(401, { code: 'invalid_client', message: 'no' }));
    const client = new HeraldClient({
      baseUrl: BASE,
      clientId: 'ck_x',
      secret: 'sk_bad',
      fetch: fake.fetch,
    });
    const error = await client.contacts.get('a').catch((e) => e);
    expect(error).toMatchObject({ status: 401, code: 'invalid_client' });
    expect(fake.sent).toHaveLength(1);
  });
});

describe('contacts', () => {
  it('when an externalId holds a slash, then it is one percent-encoded path segment', async () => {
    const { client, calls } = clientWith(() => json(201, { id: 'i', email: 'e@x.io' }));
    const result = await client.contacts.upsert('team/a b', { email: 'e@x.io' });
    expect(result.created).toBe(true);
    expect(calls()[0]!.url).toBe(`${BASE}/v1/contacts/team%2Fa%20b`);
    expect(calls()[0]!.method).toBe('PUT');
  });

  it('when an externalId is a path step, then it is refused before sending', async () => {
    const { client, sent } = clientWith(() => json(200, {}));
    for (const id of ['.', '..', '../x'])
      await expect(client.contacts.get(id)).rejects.toThrow(TypeError);
    expect(sent).toHaveLength(0);
  });

  it('when an erase by externalId got no answer and its resend finds nothing, then the erasure succeeded', async () => {
    let n = 0;
    const { client, calls } = clientWith(() =>
      ++n === 1 ? 'network-error' : json(404, { code: 'not_found', message: 'no such contact' }),
    );
    await expect(client.contacts.erase('user-1')).resolves.toBeUndefined();
    expect(calls()).toHaveLength(2);
  });

  it('when an erase finds nothing at once, then it is a 404', async () => {
    const { client } = clientWith(() =>
      json(404, { code: 'not_found', message: 'no such contact' }),
    );
    await expect(client.contacts.erase('user-1')).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('when an export streams in pieces, then each line is parsed as it completes', async () => {
    const lines = [
      { type: 'contact', data: { id: 'c', email: 'a@example.com' } },
      { type: 'event', data: { id: 'e1', eventName: 'x' } },
      { type: 'event', data: { id: 'e2', eventName: 'ü' } },
    ];
    const bytes = new TextEncoder().encode(lines.map((l) => JSON.stringify(l) + '\n').join(''));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.slice(i, i + 7));
        controller.close();
      },
    });
    const { client, calls } = clientWith(
      () =>
        new Response(stream, { status: 200, headers: { 'content-type': 'application/x-ndjson' } }),
    );
    const got = [];
    for await (const line of client.contacts.exportById('c')) got.push(line);
    expect(got).toStrictEqual(lines);
    expect(calls()[0]!.headers.accept).toBe('application/x-ndjson');
  });

  it('when the caller aborts, then the call rejects with the reason and stops resending', async () => {
    const controller = new AbortController();
    const { client, calls } = clientWith((request) => hang(request.signal));
    const pending = client.contacts.get('a', { signal: controller.signal }).catch((e) => e);
    await new Promise((r) => setTimeout(r, 20));
    controller.abort(new Error('stop'));
    expect((await pending).message).toBe('stop');
    expect(calls()).toHaveLength(1);
  });
});

describe('the client options', () => {
  it('when a publishable ClientID comes with a secret, then the client refuses it', () => {
    expect(() => new HeraldClient({ baseUrl: BASE, clientId: 'pk_x', secret: 's' })).toThrow(
      TypeError,
    );
  });

  it('when the publishable key is not pk_, then the client refuses it', () => {
    expect(() => new HeraldClient({ baseUrl: BASE, publishableKey: 'ck_x' })).toThrow(TypeError);
  });

  it('when a secret key is used in a browser, then the client refuses it unless told otherwise', () => {
    const g = globalThis as Record<string, unknown>;
    g.window = {};
    g.document = {};
    try {
      expect(() => new HeraldClient({ baseUrl: BASE, clientId: 'ck_x', secret: 'sk_x' })).toThrow(
        /browser/,
      );
      expect(
        () =>
          new HeraldClient({
            baseUrl: BASE,
            clientId: 'ck_x',
            secret: 'sk_x',
            dangerouslyAllowSecretKeyInBrowser: true,
          }),
      ).not.toThrow();
      expect(() => new HeraldClient({ baseUrl: BASE, publishableKey: 'pk_x' })).not.toThrow();
    } finally {
      delete g.window;
      delete g.document;
    }
  });
});

describe('send (the transport)', () => {
  it('when an Event request went unanswered, then it is not resent after the dedup window, whatever the deadline', async () => {
    let clock = 0;
    const fake = fakeFetch(() => {
      clock += 20_000; // each attempt takes 20 s and is lost
      return 'network-error';
    });
    const transport: Transport = {
      baseUrl: BASE,
      fetch: fake.fetch,
      retry: {
        maxAttempts: 100,
        deadlineMs: 3_600_000,
        timeoutMs: 60_000,
        baseDelayMs: 1,
        maxDelayMs: 1,
      },
      now: () => clock,
      random: () => 0,
    };
    const request = {
      method: 'POST',
      path: '/v1/events/by-email',
      body: '[]',
      auth: { authorization: 'x' },
    } as const;
    const error = await send(transport, { ...request, resendWithinMs: 55_000 }).catch((e) => e);
    expect(error).toMatchObject({ code: 'network_error' });
    // Sent at 0, 20 s and 40 s; a resend at 60 s would be past the window.
    expect(fake.sent).toHaveLength(3);
  });

  it('when earlier answers were 429s (nothing recorded), then the window does not limit the resends', async () => {
    let clock = 0;
    let n = 0;
    const fake = fakeFetch(() => {
      clock += 20_000;
      return ++n < 6
        ? json(429, { code: 'rate_limited', message: 'm' }, { 'retry-after': '0' })
        : json(202, { accepted: 0 });
    });
    const transport: Transport = {
      baseUrl: BASE,
      fetch: fake.fetch,
      retry: {
        maxAttempts: 100,
        deadlineMs: 3_600_000,
        timeoutMs: 60_000,
        baseDelayMs: 1,
        maxDelayMs: 1,
      },
      now: () => clock,
      random: () => 0,
    };
    const answer = await send(transport, {
      method: 'POST',
      path: '/v1/events/by-email',
      body: '[]',
      auth: { authorization: 'x' },
      resendWithinMs: 55_000,
    });
    expect(answer.attempts).toBe(6);
  });

  it('when the deadline is short, then the attempt timeout is cut to what is left', async () => {
    const fake = fakeFetch((request) => hang(request.signal));
    const transport: Transport = {
      baseUrl: BASE,
      fetch: fake.fetch,
      retry: { maxAttempts: 10, deadlineMs: 100, timeoutMs: 60_000, baseDelayMs: 1, maxDelayMs: 1 },
    };
    const started = Date.now();
    const error = await send(transport, {
      method: 'GET',
      path: '/v1/x',
      auth: { authorization: 'x' },
    }).catch((e) => e);
    expect(error).toMatchObject({ code: 'timeout' });
    // Bounded by the deadline, not by the 60 s attempt timeout (a generous bound: no timing test).
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe('what every request carries', () => {
  it('when any request is sent, then it names the SDK and its version, and in Node.js the User-Agent too', async () => {
    const { client, sent } = clientWith(() => json(202, { accepted: 1 }));
    await client.events.record('by-external-id', [event]);
    const version = (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
        version: string;
      }
    ).version;
    expect(SDK_VERSION).toBe(version);
    for (const request of sent) {
      expect(request.headers['x-herald-client']).toBe(`herald-client-js/${version}`);
      expect(request.headers['user-agent']).toBe(
        `herald-client-js/${version} node/${process.versions.node}`,
      );
    }
  });

  it('when the body fits a keepalive request (64 KiB), then it is sent keepalive, so a closing page still delivers it', async () => {
    const { client, calls } = clientWith(() => json(202, { accepted: 1 }));
    await client.events.record('by-external-id', [event]);
    const big = Array.from({ length: 10 }, (_, i) => ({
      ...event,
      properties: { note: `${i}`.padEnd(8_000, 'x') },
    }));
    await client.events.record('by-external-id', big);
    expect(calls().map((r) => r.keepalive)).toEqual([true, false]);
  });
});
