// Billing through the ingress: the operator routes, the operator CLI's
// `billing` commands, and the subscription messages the running service publishes to Kafka.
// Needs `npm start` and a built CLI (`npm run build`).
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { subscriptionChangedMessage, TOPICS } from '@herald/messages';
import { watchTenant } from '@herald/testing';
import { admin, cliPath, expectError, INGRESS, newTenant, runCli } from './support.js';

const billing = (method: string, tenantId: string, route = '', token?: string) =>
  admin(method, `/tenants/${tenantId}/billing${route}`, undefined, token);

async function status(res: Response) {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res.json();
}

describe('billing through the operator API', () => {
  it('when payments fail three times, then suspended; when details are updated, then active again', async () => {
    const tenantId = await newTenant('Billing E2E');
    expect(await status(await billing('GET', tenantId))).toStrictEqual({
      state: 'active',
      consecutiveFailures: 0,
    });

    const watch = await watchTenant(TOPICS.subscriptionsChanged, tenantId);
    try {
      const answers = [];
      for (let i = 0; i < 3; i += 1) {
        answers.push(await status(await billing('POST', tenantId, '/payment-failures')));
      }
      expect(answers).toStrictEqual([
        { state: 'active', consecutiveFailures: 1 },
        { state: 'active', consecutiveFailures: 2 },
        { state: 'suspended', consecutiveFailures: 3 },
      ]);
      expect(await status(await billing('GET', tenantId))).toStrictEqual({
        state: 'suspended',
        consecutiveFailures: 3,
      });
      expect(await status(await billing('POST', tenantId, '/payment-details'))).toStrictEqual({
        state: 'active',
        consecutiveFailures: 0,
      });

      // The service's outbox relay publishes each change, in order, keyed by Tenant.
      const messages = await watch.waitForCount(4);
      expect(messages.map((m) => m.key)).toStrictEqual(Array(4).fill(tenantId));
      expect(
        messages.map((m) => {
          const { state, consecutiveFailures, version } = subscriptionChangedMessage.parse(m.value);
          return [state, consecutiveFailures, version];
        }),
      ).toStrictEqual([
        ['active', 1, 1],
        ['active', 2, 2],
        ['suspended', 3, 3],
        ['active', 0, 4],
      ]);
    } finally {
      await watch.stop();
    }
  });

  it.each([
    ['GET', ''],
    ['POST', '/payment-failures'],
    ['POST', '/payment-details'],
  ])('when %s billing%s has no or a wrong admin token, then 401', async (method, route) => {
    const tenantId = await newTenant('Billing E2E 401');
    for (const token of ['', 'wrong-token']) {
      await expectError(await billing(method, tenantId, route, token), 401, 'unauthenticated');
    }
    expect(await status(await billing('GET', tenantId))).toStrictEqual({
      state: 'active',
      consecutiveFailures: 0,
    });
  });

  it('when the Tenant is unknown or not a uuid, then 404 not_found', async () => {
    for (const tenantId of [randomUUID(), 'not-a-tenant']) {
      await expectError(await billing('GET', tenantId), 404, 'not_found');
      await expectError(await billing('POST', tenantId, '/payment-failures'), 404, 'not_found');
      await expectError(await billing('POST', tenantId, '/payment-details'), 404, 'not_found');
    }
  });

  it('when another method is used, then 405; the internal route is not routed, then 404', async () => {
    const tenantId = await newTenant('Billing E2E 405');
    await expectError(await billing('DELETE', tenantId), 405, 'method_not_allowed');
    await expectError(
      await billing('GET', tenantId, '/payment-failures'),
      405,
      'method_not_allowed',
    );
    await expectError(
      await fetch(`${INGRESS}/internal/v1/tenants/${tenantId}/subscription`),
      404,
      'not_found',
    );
  });
});

describe('herald-admin billing against the running stack', () => {
  beforeAll(() => {
    if (!existsSync(cliPath)) {
      throw new Error(`${cliPath} is missing: build the CLI first (npm run build)`);
    }
  });

  it('when payment-failed runs three times, then show says suspended; payment-updated makes it active', async () => {
    const tenantId = await newTenant('Billing CLI E2E');
    const show = () => runCli(['billing', 'show', '--tenant', tenantId, '--get', 'state']);
    expect(await show()).toEqual({ code: 0, stdout: 'active\n', stderr: '' });

    for (let i = 1; i <= 3; i += 1) {
      const failed = await runCli(['billing', 'payment-failed', '--tenant', tenantId, '--json']);
      expect(failed).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(failed.stdout)).toStrictEqual({
        state: i < 3 ? 'active' : 'suspended',
        consecutiveFailures: i,
      });
    }
    expect(await show()).toEqual({ code: 0, stdout: 'suspended\n', stderr: '' });

    const updated = await runCli(['billing', 'payment-updated', '--tenant', tenantId, '--json']);
    expect(JSON.parse(updated.stdout)).toStrictEqual({ state: 'active', consecutiveFailures: 0 });
    expect(await show()).toEqual({ code: 0, stdout: 'active\n', stderr: '' });
  });

  it('when the Tenant is unknown, then the CLI exits non-zero and names the error', async () => {
    const result = await runCli(['billing', 'show', '--tenant', randomUUID()]);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: not_found: no such tenant \(HTTP 404\)/);
  });
});
