// Text UTF-8 cannot encode, and instants RFC 3339 cannot write in UTC, through the ingress: each
// service's routes answer 400 validation_error naming the field, and nothing is stored. Stored,
// an unpaired surrogate would become U+FFFD and make distinct identities one.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { accessToken, admin, call, INGRESS, newTenant } from './support.js';

const NOT_WELL_FORMED = 'must be well-formed Unicode, without an unpaired surrogate';

let tenantId: string;
let token: string;
beforeAll(async () => {
  tenantId = await newTenant('Well-formed E2E');
  token = await accessToken(tenantId, ['contacts:write', 'contacts:read', 'events:write']);
});

/** A POST of JSON text exactly as written, escapes included. */
const postRaw = (route: string, body: string, authorization: string) =>
  fetch(`${INGRESS}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${authorization}`, 'content-type': 'application/json' },
    body,
  });

async function expect400(res: Response, message: string) {
  expect({ status: res.status, body: await res.json() }).toStrictEqual({
    status: 400,
    body: { code: 'validation_error', message },
  });
}

describe('an unpaired surrogate in any field of any service', () => {
  it('contacts: when emails differ only in an unpaired surrogate, then each is a 400 and none is a Contact', async () => {
    const unique = randomUUID();
    for (const surrogate of ['\\ud800', '\\udc00', '\\ud801']) {
      await expect400(
        await postRaw('/v1/contacts', `{"email":"lone${surrogate}-${unique}@x.com"}`, token),
        `body.email: ${NOT_WELL_FORMED}`,
      );
    }
    // What the first would have been stored as, had it been accepted.
    const res = await call('POST', '/v1/contacts', token, { email: `lone\ufffd-${unique}@x.com` });
    expect(res.status).toBe(201);
  });

  it('contacts: when the externalId in the path percent-encodes a surrogate, then 400', async () => {
    const res = await call('PUT', '/v1/contacts/x%ED%A0%80', token, { email: 'a@example.com' });

    await expect400(res, 'the path has malformed percent-encoding');
  });

  it('contacts: when an organization externalId holds one, then 400, not a 409 against another', async () => {
    for (const externalId of ['x\ud800', 'x\udc00']) {
      await expect400(
        await admin('POST', `/tenants/${tenantId}/organizations`, { externalId }),
        `body.externalId: ${NOT_WELL_FORMED}`,
      );
    }
  });

  it('events: when eventName or a properties key holds one, then 400 naming it', async () => {
    const event = {
      contactEmail: 'nobody@example.com',
      eventName: 'ok',
      occurredAt: '2026-03-04T05:06:07Z',
    };

    await expect400(
      await call('POST', '/v1/events/by-email', token, [event, { ...event, eventName: 'a\ud800' }]),
      `events[1].eventName: ${NOT_WELL_FORMED}`,
    );
    await expect400(
      await call('POST', '/v1/events/by-email', token, { ...event, properties: { 'k\udc00': 1 } }),
      'event.properties: has a key that is not well-formed Unicode: it holds an unpaired surrogate',
    );
  });

  it('auth: when a tenant name holds one, then 400 naming it', async () => {
    await expect400(
      await admin('POST', '/tenants', { name: 'Acme\udbff' }),
      `body.name: ${NOT_WELL_FORMED}`,
    );
  });
});

describe('occurredAt outside the years 0000 to 9999 in UTC', () => {
  it.each([['0000-01-01T00:00:00+01:00'], ['9999-12-31T23:59:59-23:59']])(
    'when occurredAt is %s, then 400 naming it',
    async (occurredAt) => {
      const res = await call('POST', '/v1/events/by-email', token, {
        contactEmail: 'nobody@example.com',
        eventName: 'far',
        occurredAt,
      });

      await expect400(
        res,
        'event.occurredAt: must be an instant from 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z in UTC',
      );
    },
  );
});
