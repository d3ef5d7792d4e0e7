// examples/node-tracker, run as its README says against the local stack: a signup, page views
// and an order go to the example server, whose batching tracker holds the Events; SIGTERM makes
// it close the tracker (sending what is queued) and exit. The Contact's export must then hold
// exactly the tracked Events, with the dedupKeys the server logged.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { INGRESS, basic, exchange, newKey, newTenant, repoRoot } from './support.js';

const SERVER = path.join(repoRoot, 'examples', 'node-tracker', 'server.mjs');

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** The example server with these variables, once it prints where it listens. */
function startExample(env: Record<string, string>): Promise<Started> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS; // jest's VM flags are not the example's
  const child = spawn(process.execPath, [SERVER], { env: childEnv, cwd: repoRoot });
  let output = '';
  child.stdout.on('data', (d) => (output += String(d)));
  child.stderr.on('data', (d) => (output += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the example did not start within 20 s:\n${output}`));
    }, 20_000);
    const onData = () => {
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (!url) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      resolve({ child, url, output: () => output, exited });
    };
    child.stdout.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the example exited ${code} before listening:\n${output}`));
    });
  });
}

let started: Started | undefined;

afterAll(() => {
  if (started && started.child.exitCode === null) started.child.kill('SIGKILL');
});

describe('examples/node-tracker', () => {
  it('tracks through the batching tracker and sends the queue on SIGTERM', async () => {
    const tenant = await newTenant('Example node-tracker');
    // The example's key has the default scopes; the test reads back with a key of its own.
    const key = await newKey(tenant);
    const reader = await newKey(tenant, { kind: 'secret', scopes: ['contacts:export'] });

    started = await startExample({
      HERALD_URL: INGRESS.replace(/\/+$/, ''),
      HERALD_CLIENT_ID: key.clientId,
      HERALD_SECRET: key.secret!,
      PORT: '0',
    });
    const app = started.url;
    const signup = await fetch(`${app}/users/${encodeURIComponent('user 1/a')}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'tracker-example@example.com', name: 'Ada' }),
    });
    expect(signup.status).toBe(201);
    const { contactId } = await signup.json();

    const user = `user=${encodeURIComponent('user 1/a')}`;
    const keys: Record<string, string> = {};
    for (const page of ['/pricing', '/docs/start']) {
      const res = await fetch(`${app}${page}?${user}`);
      expect(res.status).toBe(200);
      keys[`Page Viewed ${page}`] = (await res.json()).dedupKey;
    }
    const order = await fetch(`${app}/orders?${user}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ total: 42 }),
    });
    expect(order.status).toBe(201);
    keys['Order Completed'] = (await order.json()).dedupKey;

    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
    const output = started.output();
    expect(output).toMatch(/SIGTERM: sending \d+ queued Event\(s\)\ndone\n$/);
    expect(output).not.toMatch(/not recorded/);
    const logged = [...output.matchAll(/^tracked (.+) for user 1\/a \((\S+)\)$/gm)];
    expect(logged.map((m) => m[1])).toStrictEqual([
      'Signed Up',
      'Page Viewed',
      'Page Viewed',
      'Order Completed',
    ]);

    const token = await exchange(basic(reader.clientId, reader.secret!));
    expect(token.status).toBe(200);
    const { accessToken } = await token.json();
    const exported = await fetch(`${INGRESS}/v1/contacts/by-id/${contactId}/export`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(exported.status).toBe(200);
    const lines = (await exported.text())
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: 'contact', data: { externalId: 'user 1/a' } });
    const events = lines.slice(1).map((l) => l.data);
    expect(events).toHaveLength(4);
    // Every Event the server logged, recorded once, under the dedupKey it logged.
    expect(events.map((e) => e.dedupKey).sort()).toStrictEqual(logged.map((m) => m[2]).sort());
    const byKey = Object.fromEntries(events.map((e) => [e.dedupKey, e]));
    expect(byKey[keys['Page Viewed /pricing']!]).toMatchObject({
      eventName: 'Page Viewed',
      properties: { path: '/pricing' },
    });
    expect(byKey[keys['Page Viewed /docs/start']!]).toMatchObject({
      properties: { path: '/docs/start' },
    });
    expect(byKey[keys['Order Completed']!]).toMatchObject({
      eventName: 'Order Completed',
      properties: { total: 42 },
    });
  }, 60_000);
});
