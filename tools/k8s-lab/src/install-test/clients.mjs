// The install test as a client of the release: its public routes called through the Services'
// ClusterIPs (the fixture, an Event, a Contact's export and erasure), and a Kafka consumer
// watching what the release's relay publishes.
import { randomUUID } from 'node:crypto';
import { consumeBatches, createKafka } from '@herald/kafka';
import { ports } from '@herald/stack/config.mjs';
import { sleep } from '@herald/stack/processes.mjs';
import { adminToken } from '@herald/stack/secrets.mjs';

export const EVENTS_TOPIC = 'herald.events.recorded';

/** @typedef {import('./release.mjs').Urls} Urls */
/**
 * What the fixture made: the Tenant, a bearer token of its secret key, a Contact.
 * @typedef {{ tenantId: string, bearer: string, contact: { id: string, externalId?: string } }} Fixture
 */
/** @typedef {{ key?: string, value?: string }} Message */

/**
 * One request with a JSON body; the parsed answer, or an error when its status is not expected.
 * @param {string} url
 * @param {string} method
 * @param {{ body?: unknown, authorization?: string, expected?: number[] }} [options]
 */
export async function call(url, method, { body, authorization, expected = [200] } = {}) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (authorization) headers.authorization = authorization;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (!expected.includes(res.status)) {
    throw new Error(`${method} ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  }
  return text ? JSON.parse(text) : null;
}

/** A consumer of herald.events.recorded on the stack's broker, from the host; resolves once it has joined. */
export async function watchEvents() {
  const kafka = createKafka({
    clientId: 'herald-test-k8s',
    brokers: [`127.0.0.1:${ports.kafka}`],
  });
  const consumer = kafka.consumer({ groupId: `herald-test-k8s-${randomUUID()}` });
  /** @type {Message[]} */
  const received = [];
  // Resolves once the group is joined (within 30 s, or it rejects).
  const stream = await Promise.race([
    consumer.consume({ topics: [EVENTS_TOPIC], mode: 'latest' }),
    sleep(30_000).then(() => Promise.reject(new Error('no group join in 30 s'))),
  ]);
  void consumeBatches(stream, (messages) => {
    for (const message of messages) {
      received.push({ key: message.key ?? undefined, value: message.value ?? undefined });
    }
    return Promise.resolve();
  }).catch(() => {});
  return {
    received,
    /**
     * The first message received that `predicate` accepts, within `ms`; else null.
     * @param {(message: Message) => boolean} predicate
     * @param {number} ms
     */
    async waitFor(predicate, ms) {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        const found = received.find(predicate);
        if (found) return found;
        await sleep(250);
      }
      return null;
    },
    stop: () => consumer.close(true),
  };
}

/**
 * Public-path fixture: a Tenant, a secret key exchanged for a token, a Contact.
 * @param {Urls} urls
 * @returns {Promise<Fixture>}
 */
export async function fixture(urls) {
  const admin = `Bearer ${adminToken()}`;
  const tenant = await call(`${urls.auth}/admin/v1/tenants`, 'POST', {
    body: { name: `k8s-test-${randomUUID()}` },
    authorization: admin,
    expected: [201],
  });
  const key = await call(`${urls.auth}/admin/v1/tenants/${tenant.id}/api-keys`, 'POST', {
    body: {
      kind: 'secret',
      scopes: [
        'events:write',
        'contacts:write',
        'contacts:read',
        'contacts:export',
        'contacts:erase',
      ],
    },
    authorization: admin,
    expected: [201],
  });
  const basic = `Basic ${Buffer.from(`${key.clientId}:${key.secret}`).toString('base64')}`;
  const token = await call(`${urls.auth}/v1/token`, 'POST', { authorization: basic });
  const bearer = `Bearer ${token.accessToken}`;
  const externalId = `k8s-${randomUUID()}`;
  const contact = await call(`${urls.contacts}/v1/contacts/${externalId}`, 'PUT', {
    body: { email: `${externalId.slice(0, 16)}@example.com` },
    authorization: bearer,
    expected: [200, 201],
  });
  return { tenantId: tenant.id, bearer, contact };
}

/**
 * The body of one Event, for the Contact (by its id) or for `identity`.
 * @param {{ id?: string }} contact
 * @param {string} eventName
 * @param {Record<string, string>} [identity]
 */
export const eventBody = (contact, eventName, identity = { contactId: contact.id }) => ({
  ...identity,
  eventName,
  occurredAt: new Date().toISOString(),
  dedupKey: `k8s-${randomUUID()}`,
});

/**
 * A Contact's export (JSON Lines), its erasure, and the reads that show it gone.
 * @param {Urls} urls
 * @param {Fixture} fx
 */
export async function exportAndErase(urls, fx) {
  const externalId = `k8s-erase-${randomUUID()}`;
  const contact = await call(`${urls.contacts}/v1/contacts/${externalId}`, 'PUT', {
    body: { email: `${externalId.slice(0, 20)}@example.com`, name: 'To Be Erased' },
    authorization: fx.bearer,
    expected: [201],
  });
  await call(`${urls.events}/v1/events/by-external-id`, 'POST', {
    body: eventBody({}, 'Before Erasure', { contactExternalId: externalId }),
    authorization: fx.bearer,
    expected: [202],
  });
  const res = await fetch(`${urls.contacts}/v1/contacts/${externalId}/export`, {
    headers: { authorization: fx.bearer },
    signal: AbortSignal.timeout(30_000),
  });
  const lines = (await res.text()).trim().split('\n').filter(Boolean);
  if (
    res.status !== 200 ||
    !lines.every((l) => JSON.parse(l)) ||
    !lines.some((l) => l.includes(contact.id)) ||
    !lines.some((l) => l.includes('"Before Erasure"'))
  ) {
    throw new Error(
      `export answered ${res.status} with ${lines.length} line(s), not the Contact and its Event`,
    );
  }
  await call(`${urls.contacts}/v1/contacts/${externalId}/erase`, 'POST', {
    authorization: fx.bearer,
    expected: [204],
  });
  await call(`${urls.contacts}/v1/contacts/${externalId}`, 'GET', {
    authorization: fx.bearer,
    expected: [404],
  });
  return `export ${lines.length} line(s) (the Contact, its Event), erase 204, read after 404`;
}
