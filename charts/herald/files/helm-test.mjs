// `helm test` (templates/tests/record-event.yaml runs this with the auth image's Node): the
// public path once, against the release's Services, then everything it made taken back.
//   1. a Tenant of its own, named as a test's (`herald-helm-test <time>`), and a secret key;
//   2. the key exchanged for an access token (auth), a Contact upserted (contacts), one Event
//      recorded about it (events): eventName `Herald Install Test`, with the property
//      `heraldInstallTest: true`, which consumers of herald.events.recorded are told to ignore;
//   3. the Contact erased (its Events with it), the key revoked, and the Tenant deleted (its data
//      removed by each service in the background; `tenant.deleted` is announced).
// A failure after step 1 still takes back what was made, and the pod fails.
const { AUTH_URL, CONTACTS_URL, EVENTS_URL, ADMIN_TOKEN } = process.env;
const id = crypto.randomUUID();

async function call(url, method, body, authorization, expected) {
  const headers = { authorization };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15000),
  });
  const text = await res.text();
  if (!expected.includes(res.status)) {
    throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  }
  console.log(`${method} ${new URL(url).pathname.replace(/[0-9a-f-]{36}/g, ':id')}: ${res.status}`);
  return text ? JSON.parse(text) : null;
}

const admin = `Bearer ${ADMIN_TOKEN}`;
const tenant = await call(
  `${AUTH_URL}/admin/v1/tenants`,
  'POST',
  { name: `herald-helm-test ${new Date().toISOString()}` },
  admin,
  [201],
);
console.log(`Tenant ${tenant.id}`);
const tenantUrl = `${AUTH_URL}/admin/v1/tenants/${tenant.id}`;
/** @type {{ clientId: string, secret: string } | undefined} */
let key;
/** @type {string | undefined} */
let bearer;
let contactPath = `/v1/contacts/helm-test-${id}`;
let failed = false;
try {
  key = await call(
    `${tenantUrl}/api-keys`,
    'POST',
    { kind: 'secret', scopes: ['events:write', 'contacts:write', 'contacts:erase'] },
    admin,
    [201],
  );
  console.log(`key ${key.clientId}`);
  const basic = `Basic ${Buffer.from(`${key.clientId}:${key.secret}`).toString('base64')}`;
  const token = await call(`${AUTH_URL}/v1/token`, 'POST', undefined, basic, [200]);
  bearer = `Bearer ${token.accessToken}`;
  const contact = await call(
    `${CONTACTS_URL}${contactPath}`,
    'PUT',
    { email: `helm-test-${id.slice(0, 8)}@example.com` },
    bearer,
    [200, 201],
  );
  contactPath = `/v1/contacts/by-id/${contact.id}`;
  await call(
    `${EVENTS_URL}/v1/events/by-contact-id`,
    'POST',
    {
      contactId: contact.id,
      eventName: 'Herald Install Test',
      occurredAt: new Date().toISOString(),
      dedupKey: id,
      properties: { heraldInstallTest: true },
    },
    bearer,
    [202],
  );
  console.log('ok: token exchanged, Contact upserted, Event recorded');
} catch (error) {
  failed = true;
  console.error(error instanceof Error ? error.message : error);
} finally {
  // Each step is tried whatever the others did; a Contact never made answers 404.
  const steps = [
    bearer &&
      (() => call(`${CONTACTS_URL}${contactPath}/erase`, 'POST', undefined, bearer, [204, 404])),
    key &&
      (() => call(`${tenantUrl}/api-keys/${key.clientId}/revoke`, 'POST', undefined, admin, [204])),
    () => call(`${tenantUrl}?confirm=${tenant.id}`, 'DELETE', undefined, admin, [202]),
  ];
  for (const step of steps.filter(Boolean)) {
    try {
      await step();
    } catch (error) {
      failed = true;
      console.error(`clean-up: ${error instanceof Error ? error.message : error}`);
    }
  }
}
if (failed) process.exit(1);
console.log('ok: Contact erased, key revoked, Tenant deleted');
