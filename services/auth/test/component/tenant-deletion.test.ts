// DELETE /admin/v1/tenants/{tenantId}?confirm={tenantId}: a Tenant's deletion as the auth service
// runs it, against stand-ins for contacts, events and billing (their own deletions are tested in
// each service) called through the real internal client.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createKafka, createProducer } from '@herald/kafka';
import { tenantDeletedMessage, topicSpecs, TOPICS } from '@herald/messages';
import { createOutboxRelay } from '@herald/outbox';
import {
  ensureTestTopics,
  pollUntil,
  startStandInServer,
  TEST_KAFKA_BROKERS,
  watchTenant,
  type StandInServer,
} from '@herald/testing';
import { pino } from 'pino';
import { tenantDataServices } from '../../src/clients/tenant-data-services.js';
import { createTenantDeleter } from '../../src/domain/tenant-deletion.js';
import {
  ADMIN_TOKEN,
  basic,
  SERVICE_TOKEN,
  startAuthService,
  type TestAuthService,
} from '../support.js';

/** The auth service's own token, which the stand-ins expect. */
const AUTH_SERVICE_TOKEN = `test-auth-${randomUUID()}`;
const GRACE_MS = 1_500;

interface Call {
  service: string;
  tenantId: string;
  at: number;
}

/**
 * Stand-ins for the three services: each records its calls and answers from `answers[service]`
 * (a status and a body, taken in turn; once used up, 200 done).
 */
interface StandIns {
  urls: Record<string, string>;
  calls: Call[];
  answers: Record<string, { status: number; body?: unknown }[]>;
  close(): Promise<void>;
}

async function startStandIns(): Promise<StandIns> {
  const calls: Call[] = [];
  const answers: StandIns['answers'] = { contacts: [], events: [], billing: [] };
  const servers: StandInServer[] = [];
  const urls: Record<string, string> = {};
  for (const service of ['contacts', 'events', 'billing']) {
    const server = await startStandInServer((req: IncomingMessage, res: ServerResponse) => {
      const match = /^\/internal\/v1\/tenants\/([^/]+)\/delete$/.exec(req.url ?? '');
      if (
        req.method !== 'POST' ||
        !match ||
        req.headers.authorization !== `Bearer ${AUTH_SERVICE_TOKEN}`
      ) {
        res.writeHead(404).end();
        return;
      }
      calls.push({ service, tenantId: match[1]!, at: Date.now() });
      const answer = answers[service]!.shift() ?? {
        status: 200,
        body: { done: true, deletedRows: 0 },
      };
      res
        .writeHead(answer.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(answer.body ?? { code: 'service_unavailable', message: 'down' }));
    });
    servers.push(server);
    urls[service] = server.url;
  }
  return {
    urls,
    calls,
    answers,
    close: async () => {
      await Promise.all(servers.map((s) => s.close()));
    },
  };
}

let standIns: StandIns;
let auth: TestAuthService;
beforeAll(async () => {
  standIns = await startStandIns();
  auth = await startAuthService({
    tenantDataServices: tenantDataServices(standIns.urls, AUTH_SERVICE_TOKEN),
    tenantDeletionGraceMs: GRACE_MS,
  });
});
afterAll(async () => {
  await auth.close();
  await standIns.close();
});

const deleteTenant = (tenantId: string, query = `?confirm=${tenantId}`, service = auth) =>
  service.request('DELETE', `/admin/v1/tenants/${tenantId}${query}`, { token: ADMIN_TOKEN });

const exchange = (service: TestAuthService, key: { clientId: string; secret: string }) =>
  fetch(`${service.url}/v1/token`, {
    method: 'POST',
    headers: { authorization: basic(key.clientId, key.secret) },
  });

const internal = (path: string) =>
  fetch(`${auth.url}/internal/v1${path}`, {
    headers: { authorization: `Bearer ${SERVICE_TOKEN}` },
  });

/** A Tenant with a secret key that exchanges. */
async function tenantWithKey(service = auth) {
  const tenant = await (
    await service.admin('/tenants', { name: 'Offboarded Inc' })
  ).json<{
    id: string;
  }>();
  const key = await (
    await service.admin(`/tenants/${tenant.id}/api-keys`, { kind: 'secret' })
  ).json<{ clientId: string; secret: string }>();
  expect((await exchange(service, key)).status).toBe(200);
  return { tenantId: tenant.id, key };
}

/** Every row of the auth database that mentions the value, in any column of any table. */
async function rowsMentioning(value: string): Promise<Record<string, number>> {
  const { rows: tables } = await auth.pool.query<{ name: string }>(
    `select table_name as name from information_schema.tables
     where table_schema = 'public' and table_type = 'BASE TABLE'`,
  );
  const found: Record<string, number> = {};
  for (const { name } of tables) {
    const { rows } = await auth.pool.query<{ n: string }>(
      `select count(*) as n from "${name}" t where t::text like '%' || $1 || '%'`,
      [value],
    );
    if (Number(rows[0]!.n) > 0) found[name] = Number(rows[0]!.n);
  }
  return found;
}

/** Sends the DELETE until it answers 404: the deletion is done. */
async function untilDeleted(tenantId: string, service = auth): Promise<void> {
  await pollUntil(async () => (await deleteTenant(tenantId, undefined, service)).status === 404, {
    timeoutMs: 20_000,
    what: `the deletion of ${tenantId}`,
  });
}

describe('refusals: nothing is done', () => {
  it.each([
    ['no confirmation', '', 400],
    ['an empty confirmation', '?confirm=', 400],
    ['a confirmation that is no id', '?confirm=yes', 400],
    ['a repeated confirmation', '?confirm=X&confirm=X', 400],
    ['the id of another Tenant', `?confirm=${randomUUID()}`, 409],
  ])(
    'when the DELETE has %s, then %i naming what to send, and the Tenant and its keys are untouched',
    async (_case, query, status) => {
      const { tenantId, key } = await tenantWithKey();

      const res = await deleteTenant(tenantId, query.replaceAll('X', tenantId));

      expect(res.status).toBe(status);
      const ask = `to delete this tenant and everything it holds, send its id again as confirm=${tenantId}; nothing was deleted`;
      expect(await res.json()).toEqual(
        status === 400
          ? { code: 'validation_error', message: `query.confirm: ${ask}` }
          : {
              code: 'conflict',
              message: `query.confirm: names another tenant than ${tenantId}; ${ask}`,
            },
      );
      expect((await exchange(auth, key)).status).toBe(200);
      expect((await internal(`/tenants/${tenantId}`)).status).toBe(200);
      expect(standIns.calls.filter((c) => c.tenantId === tenantId)).toEqual([]);
    },
  );

  it('when the Tenant does not exist or its id is no uuid, then 404 with or without confirmation', async () => {
    const unknown = randomUUID();
    for (const res of [
      await deleteTenant(unknown),
      await deleteTenant(unknown, ''),
      await deleteTenant('acme', '?confirm=acme'),
    ]) {
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ code: 'not_found', message: 'no such tenant' });
    }
  });

  it('when the admin token is missing, then 401', async () => {
    const { tenantId } = await tenantWithKey();
    const res = await auth.request('DELETE', `/admin/v1/tenants/${tenantId}?confirm=${tenantId}`);
    expect(res.status).toBe(401);
  });
});

describe('a deletion', () => {
  it('when confirmed, then 202 at once, its keys are refused from then on, every service deletes in two passes around the grace, and the Tenant is gone (a second DELETE is a 404)', async () => {
    const { tenantId, key } = await tenantWithKey();
    const other = await tenantWithKey();
    // contacts needs two calls for its first pass.
    standIns.answers.contacts!.push({ status: 200, body: { done: false, deletedRows: 1000 } });

    const res = await deleteTenant(tenantId);

    expect(res.status).toBe(202);
    const body = await res.json<{ id: string; status: string; requestedAt: string }>();
    expect(body).toEqual({ id: tenantId, status: 'deleting', requestedAt: expect.any(String) });
    // At once: no exchange, the key on the revocation list, the Tenant gone for the other services.
    expect((await exchange(auth, key)).status).toBe(401);
    const revoked = await (await internal('/revoked-keys')).json<{ clientIds: string[] }>();
    expect(revoked.clientIds).toContain(key.clientId);
    expect((await internal(`/tenants/${tenantId}`)).status).toBe(404);
    expect((await auth.admin(`/tenants/${tenantId}/api-keys`, { kind: 'secret' })).status).toBe(
      404,
    );
    // While under way, the DELETE answers 202 with the first request's time.
    const again = await deleteTenant(tenantId);
    if (again.status === 202) expect(await again.json()).toEqual(body);
    else expect(again.status).toBe(404);

    await untilDeleted(tenantId);

    const calls = standIns.calls.filter((c) => c.tenantId === tenantId);
    const services = calls.map((c) => c.service);
    expect(services.slice(0, 4)).toEqual(['contacts', 'contacts', 'events', 'billing']);
    expect(services.slice(4)).toEqual(['contacts', 'events', 'billing']);
    // The second pass starts once the grace has passed since the request.
    expect(calls[4]!.at).toBeGreaterThanOrEqual(Date.parse(body.requestedAt) + GRACE_MS - 50);
    // Nothing of it is left but the ClientID on the revocation list, and its tenant.deleted
    // message in the outbox, unless the running stack's auth relay, which publishes this
    // database's outbox, took it already (the next test follows the message to Kafka).
    const left = await rowsMentioning(tenantId);
    expect([{}, { outbox: 1 }]).toContainEqual(left);
    expect(await rowsMentioning(key.clientId)).toEqual({ deleted_key_revocations: 1 });
    const revokedAfter = await (await internal('/revoked-keys')).json<{ clientIds: string[] }>();
    expect(revokedAfter.clientIds).toContain(key.clientId);
    expect((await exchange(auth, key)).status).toBe(401);
    const { rows } = await auth.pool.query<{ topic: string; key: string; value: string }>(
      `select topic, key, value from outbox where key = $1`,
      [tenantId],
    );
    for (const row of rows) {
      expect([row.topic, row.key]).toEqual([TOPICS.tenantsDeleted, tenantId]);
      expect(tenantDeletedMessage.parse(JSON.parse(row.value))).toMatchObject({
        type: 'tenant.deleted',
        tenantId,
        requestedAt: body.requestedAt,
      });
    }

    expect((await deleteTenant(tenantId)).status).toBe(404);
    // Another Tenant keeps its key.
    expect((await exchange(auth, other.key)).status).toBe(200);
  });

  it('when the last step commits, then tenant.deleted is published on herald.tenants.deleted through the outbox relay', async () => {
    await ensureTestTopics(topicSpecs([TOPICS.tenantsDeleted]), 'auth-test-setup');
    const { tenantId } = await tenantWithKey();
    const watch = await watchTenant(TOPICS.tenantsDeleted, tenantId, {
      clientId: 'auth-test-watch',
      groupPrefix: 'auth-test',
    });
    const logger = pino({ level: 'silent' });
    const producer = createProducer(
      createKafka({ brokers: TEST_KAFKA_BROKERS, clientId: 'auth-test-relay', logger }),
    );
    const relay = createOutboxRelay({ pool: auth.pool, producer, logger, name: 'auth' });
    relay.start();
    try {
      expect((await deleteTenant(tenantId)).status).toBe(202);
      await untilDeleted(tenantId);

      const [message] = await watch.waitForCount(1);
      expect(message!.key).toBe(tenantId);
      expect(tenantDeletedMessage.parse(message!.value)).toMatchObject({
        type: 'tenant.deleted',
        tenantId,
      });
      // Published, so deleted from the outbox: nothing mentions the Tenant any more.
      await pollUntil(async () => Object.keys(await rowsMentioning(tenantId)).length === 0, {
        timeoutMs: 10_000,
        what: 'the outbox row published',
      });
    } finally {
      await relay.stop();
      await producer.close();
      await watch.stop();
    }
  });

  it('when a service fails and the replica stops halfway, then the deletion stays durable: another replica resumes it on its sweep, and a repeated DELETE continues it', async () => {
    // This replica: billing answers 503 on every call.
    const failing = await startAuthService({
      tenantDataServices: tenantDataServices(
        { ...standIns.urls, billing: 'http://127.0.0.1:9' },
        AUTH_SERVICE_TOKEN,
      ),
      tenantDeletionGraceMs: 0,
    });
    const first = await tenantWithKey(failing);
    const second = await tenantWithKey(failing);
    try {
      expect((await deleteTenant(first.tenantId, undefined, failing)).status).toBe(202);
      expect((await deleteTenant(second.tenantId, undefined, failing)).status).toBe(202);
      await pollUntil(
        async () =>
          standIns.calls.filter((c) => c.tenantId === second.tenantId && c.service === 'events')
            .length > 0,
        { timeoutMs: 10_000, what: 'the first attempt' },
      );
    } finally {
      // As a crash would leave it, but with the lease given up (a crash's expires).
      await failing.close();
    }
    expect((await exchange(auth, first.key)).status).toBe(401);
    expect((await internal(`/tenants/${first.tenantId}`)).status).toBe(404);

    // Another replica's sweep finds the first; a repeated DELETE continues the second.
    await auth.tenantDeleter.sweep();
    expect((await deleteTenant(second.tenantId)).status).toBe(202);
    await untilDeleted(first.tenantId);
    await untilDeleted(second.tenantId);
    for (const { tenantId } of [first, second]) {
      // The tenant.deleted message at most (the stack's auth relay may have published it).
      expect([[], ['outbox']]).toContainEqual(Object.keys(await rowsMentioning(tenantId)));
      expect(
        standIns.calls.filter((c) => c.tenantId === tenantId && c.service === 'billing').length,
      ).toBeGreaterThanOrEqual(2);
    }
  });

  it('when another replica holds the lease, then a run leaves the deletion to it', async () => {
    const { tenantId } = await tenantWithKey();
    await auth.pool.query(
      `update tenants set deletion_requested_at = now(), deletion_lease_until = now() + interval '1 hour'
       where id = $1`,
      [tenantId],
    );
    const deleter = createTenantDeleter({
      pool: auth.pool,
      logger: pino({ level: 'silent' }),
      services: [],
      graceMs: 0,
    });

    expect(await deleter.run(tenantId)).toBe('elsewhere');
    expect(await deleter.run(randomUUID())).toBe('gone');
    await auth.pool.query('update tenants set deletion_lease_until = null where id = $1', [
      tenantId,
    ]);
    expect(await deleter.run(tenantId)).toBe('done');
    expect(await deleter.run(tenantId)).toBe('gone');
    await deleter.stop();
  });
});
