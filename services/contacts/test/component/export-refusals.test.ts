// A participant that refuses an export because too many are streaming (the events service's
// export limits, docs/events.md#contact-export): the caller gets a documented status with
// Retry-After, never a 500. The Tenant's own cap (429) is passed on as it is, with the
// participant's Retry-After; a participant full for everyone (503) is the usual 503.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startContactsService,
  startFakeService,
  uniqueEmail,
  type TestContactsService,
} from '../support.js';

let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
let participant: Awaited<ReturnType<typeof startFakeService>>;
let service: TestContactsService;
const tenant = randomUUID();

beforeAll(async () => {
  participant = await startFakeService((req, res) => answer(req, res));
  service = await startContactsService({ deps: { contactDataServiceUrls: [participant.url] } });
});

afterAll(async () => {
  await service?.close();
  await participant?.close();
});

async function newContact(): Promise<string> {
  const res = await service.request('POST', '/v1/contacts', {
    token: service.tokenFor(tenant, ['contacts:write']),
    body: { email: uniqueEmail('export-refusal') },
  });
  expect(res.status).toBe(201);
  return (await res.json<{ id: string }>()).id;
}

const exportOf = (id: string) =>
  service.request('GET', `/v1/contacts/by-id/${id}/export`, {
    token: service.tokenFor(tenant, ['contacts:export', 'contacts:erase']),
  });

const refuse = (status: number, code: string, retryAfter: string) => {
  answer = (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', 'retry-after': retryAfter });
    res.end(JSON.stringify({ code, message: 'busy' }));
  };
};

describe('export refused by a participant for too many exports at once', () => {
  it("when the participant answers 429 (the Tenant's own cap), then the export is 429 rate_limited with the participant's Retry-After and no part of the file", async () => {
    const id = await newContact();
    refuse(429, 'rate_limited', '17');

    const res = await exportOf(id);

    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('17');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ code: 'rate_limited', message: expect.any(String) });
  });

  it('when the participant answers 429 without a usable Retry-After, then the export is still 429 with one', async () => {
    const id = await newContact();
    refuse(429, 'rate_limited', 'soon');

    const res = await exportOf(id);

    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('when the participant answers 503 (full for every Tenant), then the export is 503 service_unavailable with Retry-After', async () => {
    const id = await newContact();
    refuse(503, 'service_unavailable', '5');

    const res = await exportOf(id);

    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await res.json()).toEqual({ code: 'service_unavailable', message: expect.any(String) });
  });

  it('when the participant answers an erasure with 429, then the erasure stays the 503 it always was', async () => {
    const id = await newContact();
    refuse(429, 'rate_limited', '17');

    const res = await service.request('POST', `/v1/contacts/by-id/${id}/erase`, {
      token: service.tokenFor(tenant, ['contacts:erase']),
    });

    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
