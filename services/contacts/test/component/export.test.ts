import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  SERVICE_TOKEN,
  startContactsService,
  startFakeService,
  TIMESTAMP,
  uniqueEmail,
  type TestContactsService,
} from '../support.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

// One fake participant (the events service's seam); each test sets how it answers.
let answer: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  res.end();
};
const participantCalls: Array<{ method: string; url: string; authorization: string | undefined }> =
  [];
let participant: Awaited<ReturnType<typeof startFakeService>>;
let plain: TestContactsService;
let withParticipant: TestContactsService;
let withDownParticipant: TestContactsService;

const tenant = randomUUID();
const otherTenant = randomUUID();

beforeAll(async () => {
  participant = await startFakeService((req, res) => {
    participantCalls.push({
      method: req.method ?? '',
      url: req.url ?? '',
      authorization: req.headers.authorization,
    });
    answer(req, res);
  });
  // A port nothing listens on any more.
  const gone = await startFakeService((_req, res) => res.end());
  await gone.close();
  [plain, withParticipant, withDownParticipant] = await Promise.all([
    startContactsService(),
    startContactsService({ deps: { contactDataServiceUrls: [participant.url] } }),
    startContactsService({ deps: { contactDataServiceUrls: [participant.url, gone.url] } }),
  ]);
});

afterAll(async () => {
  await Promise.all([plain.close(), withParticipant.close(), withDownParticipant.close()]);
  await participant.close();
});

/** Each service in-process signs its own tokens: a token works on the service it came from. */
const exportToken = (svc: TestContactsService) => svc.tokenFor(tenant, ['contacts:export']);
const exportFrom = (svc: TestContactsService, path: string) =>
  svc.request('GET', path, { token: exportToken(svc) });

async function createContact(fields: Record<string, unknown>, externalId?: string) {
  const token = plain.tokenFor(tenant, ['contacts:write']);
  const res =
    externalId === undefined
      ? await plain.request('POST', '/v1/contacts', { token, body: fields })
      : await plain.request('PUT', `/v1/contacts/${encodeURIComponent(externalId)}`, {
          token,
          body: fields,
        });
  expect(res.status).toBe(201);
  return res.json<{ id: string; externalId?: string; email: string }>();
}

/** Reads a body chunk by chunk until `done` says it has enough; returns the text so far. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  done: (text: string) => boolean,
  sofar = '',
): Promise<string> {
  const decoder = new TextDecoder();
  let text = sofar;
  while (!done(text)) {
    const { value, done: ended } = await reader.read();
    if (ended) throw new Error(`the body ended early: ${JSON.stringify(text)}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

const lines = (text: string) => text.split('\n').filter(Boolean);

/** Fails with `message` unless `promise` settles within `ms`. */
async function within<T>(ms: number, message: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('export: the file', () => {
  it('when a Contact is exported by id and by externalId, then 200 JSON Lines whose one line is the Contact object', async () => {
    const externalId = `user/${randomUUID()}`;
    const created = await createContact(
      {
        email: uniqueEmail('export'),
        name: 'Ada Lovelace',
        phone: '+4915112345678',
        timeZone: 'UTC',
      },
      externalId,
    );
    const read = await plain.request('GET', `/v1/contacts/by-id/${created.id}`, {
      token: plain.tokenFor(tenant, ['contacts:read']),
    });
    const contact = await read.json();

    for (const path of [
      `/v1/contacts/by-id/${created.id}/export`,
      `/v1/contacts/${encodeURIComponent(externalId)}/export`,
    ]) {
      const res = await exportFrom(plain, path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson(;|$)/);
      expect(res.headers.get('content-disposition')).toBe(
        `attachment; filename="contact-${created.id}.ndjson"`,
      );
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      const body = await res.text();
      expect(body).toBe(`${JSON.stringify({ type: 'contact', data: contact })}\n`);
      expect(JSON.parse(body)).toEqual({
        type: 'contact',
        data: {
          id: created.id,
          externalId,
          email: created.email,
          name: 'Ada Lovelace',
          phone: '+4915112345678',
          timeZone: 'UTC',
          createdAt: expect.stringMatching(TIMESTAMP),
          updatedAt: expect.stringMatching(TIMESTAMP),
        },
      });
    }
  });

  it('when a Contact created by email alone is exported by id, then its line has no externalId, name, phone or timeZone', async () => {
    const created = await createContact({ email: uniqueEmail('export') });
    const res = await exportFrom(plain, `/v1/contacts/by-id/${created.id}/export`);
    expect(res.status).toBe(200);
    const [line, ...rest] = lines(await res.text());
    expect(rest).toEqual([]);
    expect(Object.keys(JSON.parse(line!).data).sort()).toEqual([
      'createdAt',
      'email',
      'id',
      'updatedAt',
    ]);
  });
});

describe('export: who may read what', () => {
  it.each([
    ['an unknown id', () => `/v1/contacts/by-id/${randomUUID()}/export`],
    ['a malformed id', () => '/v1/contacts/by-id/not-a-uuid/export'],
    ['an unknown externalId', () => `/v1/contacts/nobody-${randomUUID()}/export`],
    ['an externalId with U+0000', () => '/v1/contacts/a%00b/export'],
  ])('when the path names %s, then 404 not_found', async (_what, path) => {
    const res = await exportFrom(plain, path());
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'not_found' });
  });

  it('when the key lacks contacts:export, then 403 naming it, and nothing is read', async () => {
    const created = await createContact({ email: uniqueEmail('export') });
    const token = plain.tokenFor(tenant, ['contacts:read', 'contacts:write', 'contacts:erase']);
    const res = await plain.request('GET', `/v1/contacts/by-id/${created.id}/export`, { token });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      code: 'insufficient_scope',
      message: 'missing scope contacts:export',
    });
  });

  it('when there is no token, then 401 unauthenticated', async () => {
    const created = await createContact({ email: uniqueEmail('export') });
    const res = await plain.request('GET', `/v1/contacts/by-id/${created.id}/export`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
  });

  it("when another Tenant's key names the Contact by id or externalId, then 404", async () => {
    const externalId = `shared-${randomUUID()}`;
    const created = await createContact({ email: uniqueEmail('export') }, externalId);
    const token = plain.tokenFor(otherTenant, ['contacts:export']);
    for (const path of [
      `/v1/contacts/by-id/${created.id}/export`,
      `/v1/contacts/${externalId}/export`,
    ]) {
      const res = await plain.request('GET', path, { token });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'not_found' });
    }
  });

  it('when the method is not GET, then 405 with Allow: GET', async () => {
    for (const path of [`/v1/contacts/by-id/${randomUUID()}/export`, '/v1/contacts/x/export']) {
      const res = await plain.request('POST', path, { token: exportToken(plain) });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET');
      expect(await res.json()).toMatchObject({ code: 'method_not_allowed' });
    }
  });
});

describe('export: lines of the services holding data about the Contact', () => {
  it('when a participant holds Events, then its lines follow the Contact line as they arrive, not after it finished', async () => {
    const created = await createContact(
      { email: uniqueEmail('export') },
      `streamed-${randomUUID()}`,
    );
    const event = (n: number) => `${JSON.stringify({ type: 'event', data: { id: `e${n}` } })}\n`;
    let release!: () => void;
    const clientHasFirstLines = new Promise<void>((resolve) => (release = resolve));
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(event(1));
      // The rest only once the client read the Contact line and this first line: a service
      // that buffered the participant's answer would never deliver them, and the test times out.
      void clientHasFirstLines.then(() => {
        res.write(event(2));
        res.end(event(3));
      });
    };
    participantCalls.length = 0;

    const res = await exportFrom(withParticipant, `/v1/contacts/by-id/${created.id}/export`);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = await within(
      5_000,
      'the Contact line and the first participant line did not arrive before the participant finished: the export is buffered',
      readUntil(reader, (t) => lines(t).length >= 2 && t.endsWith('\n')),
    );
    expect(lines(text).map((l) => JSON.parse(l).type)).toEqual(['contact', 'event']);
    release();
    text = await readUntil(reader, (t) => lines(t).length >= 4 && t.endsWith('\n'), text);
    expect((await reader.read()).done).toBe(true);

    expect(lines(text).slice(1)).toEqual([event(1), event(2), event(3)].map((l) => l.trim()));
    expect(participantCalls).toEqual([
      {
        method: 'GET',
        url: `/internal/v1/tenants/${tenant}/contacts/${created.id}/export`,
        authorization: `Bearer ${SERVICE_TOKEN}`,
      },
    ]);
  });

  it("when a participant's last line has no newline, then the file still has one line per record", async () => {
    const created = await createContact({ email: uniqueEmail('export') });
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end('{"type":"event","data":{"id":"last"}}');
    };
    const res = await exportFrom(withParticipant, `/v1/contacts/by-id/${created.id}/export`);
    const text = await res.text();
    expect(text.endsWith('\n')).toBe(true);
    expect(lines(text).map((l) => JSON.parse(l).type)).toEqual(['contact', 'event']);
  });

  it('when a participant answers 500, then 503 service_unavailable with Retry-After and no part of the file', async () => {
    const created = await createContact({ email: uniqueEmail('export') });
    answer = (_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"code":"internal_error"}');
    };
    const res = await exportFrom(withParticipant, `/v1/contacts/by-id/${created.id}/export`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body).toEqual({ code: 'service_unavailable', message: expect.any(String) });
    expect(JSON.stringify(body)).not.toContain(created.email);
  });

  it('when one participant is down, then 503 service_unavailable with Retry-After even though the other answered', async () => {
    const created = await createContact({ email: uniqueEmail('export') });
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end('{"type":"event","data":{"id":"e1"}}\n');
    };
    const res = await exportFrom(withDownParticipant, `/v1/contacts/by-id/${created.id}/export`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await res.json()).toMatchObject({ code: 'service_unavailable' });
  });

  it("when a participant's stream breaks half way, then the transfer is cut rather than ended", async () => {
    const created = await createContact({ email: uniqueEmail('export') });
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"type":"event","data":{"id":"e1"}}\n', () => {
        setTimeout(() => res.destroy(), 20);
      });
    };
    const res = await exportFrom(withParticipant, `/v1/contacts/by-id/${created.id}/export`);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it('when no participant is configured, then the file is the Contact line alone', async () => {
    const created = await createContact({ email: uniqueEmail('export') });
    participantCalls.length = 0;
    const res = await exportFrom(plain, `/v1/contacts/by-id/${created.id}/export`);
    expect(lines(await res.text())).toHaveLength(1);
    expect(participantCalls).toEqual([]);
  });
});
