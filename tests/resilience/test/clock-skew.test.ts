// Clocks that disagree: a second auth or events process beside the stack's, its clock 5 minutes
// ahead of or behind the others (libfaketime, Debian's libfaketime, preloaded into the process),
// on the stack's databases, Redis and keys. What holds is written here; docs/reliability.md
// gives the limits and why the rest does not depend on any service's clock.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { freeLoopbackPort } from '@herald/testing';
import {
  INGRESS,
  admin,
  call,
  countByDedupKey,
  event,
  exportedEvents,
  newContact,
  newFixture,
  type Fixture,
} from './support.js';

/** tools/stack (plain JavaScript), typed with what is used here. */
interface StackService {
  entryPath: string;
  nodeArgs: string[];
}
const stackUrl = (file: string) =>
  new URL(`../../../tools/stack/src/${file}`, import.meta.url).href;
const { findService } = (await import(stackUrl('config.mjs'))) as {
  findService: (name: string) => StackService;
};
const { serviceEnv } = (await import(stackUrl('service-runner.mjs'))) as {
  serviceEnv: (name: string) => Record<string, string | undefined>;
};
const { ensureSystemPackages } = (await import(stackUrl('system-packages.mjs'))) as {
  ensureSystemPackages: (options: {
    requirements: Record<string, { find: () => string | null; apt: string }>;
  }) => Promise<Record<string, string | null>>;
};

const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const TOKEN_TTL_SECONDS = 900;
const SKEW_SECONDS = 300;

const children: ChildProcess[] = [];

/**
 * Another instance of a service of the stack (its entry, node arguments and environment), on
 * free ports, its wall clock `offset` off ('+5m', '-5m'); timers and monotonic clocks are left
 * alone. Resolves its URL once /readyz answers.
 */
async function skewedService(name: string, offset: string): Promise<string> {
  const service = findService(name);
  const [port, metricsPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const child = spawn(process.execPath, [...service.nodeArgs, service.entryPath], {
    cwd: path.resolve(path.dirname(service.entryPath), '..'),
    env: {
      ...serviceEnv(name),
      NODE_OPTIONS: undefined,
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'warn',
      OTEL_SDK_DISABLED: 'true',
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME: offset,
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}: ${stderr}`);
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return url;
    if (Date.now() > deadline) throw new Error(`${name} at ${url} not ready in 30 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Its clock as the process reads it, from the Date header of an answer (whole seconds). */
async function clockOf(url: string): Promise<number> {
  const res = await fetch(`${url}/healthz`);
  return Date.parse(res.headers.get('date') ?? '') / 1000;
}

/** A secret key of the fixture's Tenant, exchanged at `authUrl`. */
async function exchangeAt(f: Fixture, authUrl: string) {
  const key = await admin('POST', `/tenants/${f.tenantId}/api-keys`, {
    kind: 'secret',
    scopes: ['events:write'],
  });
  const { clientId, secret } = await key.json<{ clientId: string; secret: string }>();
  const res = await fetch(`${authUrl}/v1/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
  });
  expect(res.status).toBe(200);
  const { accessToken } = await res.json<{ accessToken: string }>();
  const claims = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as {
    iat: number;
    exp: number;
  };
  return { accessToken, claims };
}

let fixture: Fixture;
beforeAll(async () => {
  await ensureSystemPackages({
    requirements: {
      libfaketime: {
        find: () => (existsSync(LIBFAKETIME) ? LIBFAKETIME : null),
        apt: 'libfaketime',
      },
    },
  });
  fixture = await newFixture('Clock skew');
}, 300_000);

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

describe('an auth service whose clock is off by 5 minutes', () => {
  test.each([
    ['+5m', SKEW_SECONDS],
    ['-5m', -SKEW_SECONDS],
  ])(
    'when it runs %s, then the services accept its tokens at once, and they expire by the verifiers clock 5 minutes later or earlier',
    async (offset, skew) => {
      const auth = await skewedService('auth', offset);
      expect(Math.abs((await clockOf(auth)) - Date.now() / 1000 - skew)).toBeLessThan(5);

      const { accessToken, claims } = await exchangeAt(fixture, auth);
      const now = Date.now() / 1000;
      // iat and exp are the skewed clock's: a token from the future is still good (no nbf, no
      // age check), and its lifetime by the verifiers' clock is the TTL plus the skew.
      expect(Math.abs(claims.iat - now - skew)).toBeLessThan(10);
      expect(Math.abs(claims.exp - now - (TOKEN_TTL_SECONDS + skew))).toBeLessThan(10);

      const contact = await newContact(fixture);
      const res = await call(
        'POST',
        '/v1/events/by-contact-id',
        accessToken,
        event('by-contact-id', fixture, contact, { dedupKey: randomUUID() }),
      );
      expect(res.status).toBe(202);
    },
    120_000,
  );
});

describe('an events service whose clock is off by 5 minutes', () => {
  test.each(['+5m', '-5m'])(
    'when it runs %s and an Event is sent through it and again through the stack with the same dedupKey, then it is recorded once',
    async (offset) => {
      const events = await skewedService('events', offset);
      const contact = await newContact(fixture);
      const dedupKey = `skew-${randomUUID()}`;
      const body = event('by-contact-id', fixture, contact, { dedupKey });

      const first = await fetch(`${events}/v1/events/by-contact-id`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fixture.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(first.status).toBe(202);
      const again = await call('POST', '/v1/events/by-contact-id', fixture.token, body);
      expect(again.status).toBe(202);

      // The window is PostgreSQL's clock (the claim's time), not either process's.
      expect(countByDedupKey(await exportedEvents(fixture, contact.id))[dedupKey]).toBe(1);
    },
    120_000,
  );

  test('when it runs +5m, then its rate budget is the one the stack charges (Redis keeps the time)', async () => {
    const events = await skewedService('events', '+5m');
    const contact = await newContact(fixture);
    const send = (base: string) =>
      fetch(`${base}/v1/events/by-contact-id`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fixture.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(event('by-contact-id', fixture, contact)),
      });
    // Spend 400 of the burst of 1,000 at once through the stack (it refills 100 a second),
    // then ask the skewed process: a bucket refilled by its clock would be full again.
    await Promise.all(Array.from({ length: 400 }, () => send(INGRESS)));
    const answer = await send(events);
    expect(answer.status).toBe(202);
    const limit = Number(answer.headers.get('ratelimit-limit'));
    const remaining = Number(answer.headers.get('ratelimit-remaining'));
    expect(limit).toBe(1000);
    expect(remaining).toBeLessThan(limit - 100);
  }, 120_000);
});
