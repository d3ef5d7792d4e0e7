import { afterEach, describe, expect, it } from '@jest/globals';
import { errors } from '@herald/errors';
import {
  createHttpApp,
  jsonBody,
  publicCors,
  startServer,
  type RunningServer,
} from '../../src/index.js';
import { loggerToLines } from '../log-lines.js';

const { logger, lines } = loggerToLines();

let running: RunningServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
  lines.length = 0;
});

/** Called when a request reaches the /slow handler. */
let slowEntered: () => void = () => {};

async function start(readiness: Record<string, () => Promise<unknown>> = {}) {
  const app = createHttpApp({
    logger,
    readiness,
    requestLog: { slowInternalMs: 1_000 },
    routes: (app) => {
      app.post('/echo', ...jsonBody(), (req, res) => {
        res.json({ got: req.body as unknown });
      });
      app.get('/slow', async (_req, res) => {
        slowEntered();
        await new Promise((r) => setTimeout(r, 300));
        res.json({ done: true });
      });
      app.post('/internal/v1/things/:id', ...jsonBody(), async (req, res) => {
        const { wait, status } = req.body as { wait?: number; status?: number };
        if (wait) await new Promise((r) => setTimeout(r, wait));
        res.status(status ?? 200).json({ id: req.params.id });
      });
      app.get('/cacheable', (_req, res) => {
        res.set('Cache-Control', 'public, max-age=300').json({ keys: [] });
      });
      app.use('/public', publicCors(['POST']));
      app.post('/public', () => {
        throw errors.unauthenticated();
      });
    },
  });
  running = await startServer(app, { host: '127.0.0.1', port: 0, logger, shutdownTimeoutMs: 2000 });
  return running.url;
}

describe('createHttpApp', () => {
  it('when a caller sends X-Request-Id, then it is echoed; otherwise one is generated', async () => {
    const url = await start();
    const echoed = await fetch(`${url}/healthz`, { headers: { 'X-Request-Id': 'req-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('req-123');
    const generated = await fetch(`${url}/healthz`);
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const hostile = await fetch(`${url}/healthz`, { headers: { 'X-Request-Id': 'a b;"<script>' } });
    expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('when any route answers, errors and unknown paths included, then Cache-Control is no-store unless the route sets its own', async () => {
    const url = await start();
    const answers = [
      await fetch(`${url}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"email":"someone@example.com"}',
      }),
      await fetch(`${url}/public`, { method: 'POST' }),
      await fetch(`${url}/no-such-route/someone@example.com`),
    ];
    expect(answers.map((r) => r.headers.get('cache-control'))).toEqual([
      'no-store',
      'no-store',
      'no-store',
    ]);
    const cacheable = await fetch(`${url}/cacheable`);
    expect(cacheable.headers.get('cache-control')).toBe('public, max-age=300');
  });

  it('when a request is served, then one JSON log line carries its request id and no raw URL', async () => {
    const url = await start();
    await fetch(`${url}/echo?email=someone@example.com`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'log-me' },
      body: '{"a":1}',
    });
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.req?.id === 'log-me');
    expect(entry).toBeDefined();
    expect(entry.res.statusCode).toBe(200);
    expect(entry.route).toBe('/echo');
    expect(JSON.stringify(entry)).not.toContain('someone@example.com');
  });

  it('when the caller goes away before the answer, then the log line reads 499, not the default 200', async () => {
    const url = await start();
    const entered = new Promise<void>((resolve) => (slowEntered = resolve));
    const abort = new AbortController();
    const gone = fetch(`${url}/slow`, {
      headers: { 'x-request-id': 'gone' },
      signal: abort.signal,
    }).catch(() => 'aborted');
    await entered;
    abort.abort();
    expect(await gone).toBe('aborted');
    const deadline = Date.now() + 5_000;
    while (!lines.some((l) => l.includes('"gone"')) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.req?.id === 'gone');
    expect(entry).toMatchObject({ route: '/slow', res: { statusCode: 499 }, msg: 'GET 499' });
    // The handler still answers into the closed connection; no second line is written.
    await new Promise((r) => setTimeout(r, 350));
    expect(lines.filter((l) => l.includes('"gone"'))).toHaveLength(1);
  });

  it('when a request is served, then the log line has the route pattern, status, response time and message', async () => {
    const url = await start();
    await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'fields' },
      body: '{}',
    });
    await fetch(`${url}/nowhere/someone@example.com`, { headers: { 'x-request-id': 'unknown' } });
    await new Promise((r) => setTimeout(r, 20));
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const served = entries.find((l) => (l.req as { id?: string } | undefined)?.id === 'fields');
    expect(served).toMatchObject({
      req: { id: 'fields', method: 'POST' },
      route: '/echo',
      res: { statusCode: 200 },
      msg: 'POST 200',
    });
    expect(typeof served?.responseTime).toBe('number');
    const unknown = entries.find((l) => (l.req as { id?: string } | undefined)?.id === 'unknown');
    expect(unknown).toMatchObject({ res: { statusCode: 404 }, msg: 'GET 404' });
    expect(unknown).not.toHaveProperty('route');
    expect(JSON.stringify(unknown)).not.toContain('someone@example.com');
  });

  it('when health probes are answered, then they are not logged', async () => {
    const url = await start();
    await fetch(`${url}/healthz`, { headers: { 'x-request-id': 'probe-1' } });
    await fetch(`${url}/readyz`, { headers: { 'x-request-id': 'probe-2' } });
    await new Promise((r) => setTimeout(r, 20));
    expect(lines.join('')).not.toContain('probe-');
  });

  it('when internal routes answer, then only errors and slow answers are logged', async () => {
    const url = await start();
    const call = (id: string, body: object) =>
      fetch(`${url}/internal/v1/things/${id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': id },
        body: JSON.stringify(body),
      });
    expect((await call('quick', {})).status).toBe(200);
    expect((await call('refused', { status: 422 })).status).toBe(422);
    expect((await call('failed', { status: 500 })).status).toBe(500);
    expect((await call('slow', { wait: 1_050 })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 20));
    const logged = lines
      .map((l) => JSON.parse(l) as { req?: { id?: string }; route?: string; err?: unknown })
      .filter((l) => l.req?.id !== undefined);
    expect(logged.map((l) => l.req?.id).sort()).toEqual(['failed', 'refused', 'slow']);
    expect(logged.every((l) => l.route === '/internal/v1/things/:id')).toBe(true);
    expect(logged.find((l) => l.req?.id === 'failed')?.err).toBeDefined();
  });

  it('when dependencies answer, then /readyz is 200; when one fails, then 503 naming it', async () => {
    let dbUp = true;
    const url = await start({
      database: async () => {
        if (!dbUp) throw new Error('down');
      },
    });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    dbUp = false;
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      code: 'service_unavailable',
      checks: { database: 'failing' },
    });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('when a body route gets no JSON Content-Type, then 400 validation_error', async () => {
    const url = await start();
    const res = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'validation_error' });
    const missing = await fetch(`${url}/echo`, { method: 'POST' });
    expect(missing.status).toBe(400);
    const empty = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ message: 'a JSON request body is required' });
  });

  it('when the JSON body is over 1 MiB, then 413; exactly 1 MiB is accepted', async () => {
    const url = await start();
    const exact = `"${'x'.repeat(1024 * 1024 - 2)}"`;
    const ok = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: exact,
    });
    expect(ok.status).toBe(200);
    const over = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `"${'x'.repeat(1024 * 1024)}"`,
    });
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ code: 'payload_too_large' });
  });

  it('when a public route answers, even with an error, then it allows any origin; preflights get 204', async () => {
    const url = await start();
    const res = await fetch(`${url}/public`, { method: 'POST' });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const preflight = await fetch(`${url}/public`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
  });

  it('when shutdown starts during a request, then that request finishes and new ones are refused', async () => {
    const url = await start();
    // Shutdown starts once the request is being handled, however loaded the machine is.
    const entered = new Promise<void>((resolve) => (slowEntered = resolve));
    const inFlight = fetch(`${url}/slow`);
    await entered;
    const closing = running!.close();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    await closing;
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    running = undefined;
  });

  it('when shutdown drains, then clients on kept-alive connections are answered with Connection: close and none fails', async () => {
    const url = await start();
    const seen: Array<string | null> = [];
    let failures = 0;
    let done = false;
    // Four clients, each reusing its connection as fast as it can, as a busy caller does, until
    // told to close it (a real one would then connect again, to another replica).
    const client = async () => {
      while (!done) {
        try {
          const res = await fetch(`${url}/healthz`);
          await res.arrayBuffer();
          seen.push(res.headers.get('connection'));
          if (res.headers.get('connection') === 'close') return;
        } catch {
          failures += 1;
          return;
        }
      }
    };
    const clients = [client(), client(), client(), client()];
    await new Promise((r) => setTimeout(r, 100));
    const before = seen.length;
    await running!.close({ drainMs: 300 });
    done = true;
    await Promise.all(clients);
    running = undefined;
    const during = seen.slice(before);
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((c) => c === 'close')).toHaveLength(4);
    expect(seen.slice(0, before).every((c) => c === 'keep-alive')).toBe(true);
    expect(failures).toBe(0);
  });

  it('when shutdown drains, then /readyz still reports the dependencies (200), closing its connection', async () => {
    const url = await start();
    const closing = running!.close({ drainMs: 300 });
    await new Promise((r) => setTimeout(r, 50));
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ready' });
    expect(res.headers.get('connection')).toBe('close');
    await closing;
    running = undefined;
  });

  it('while the shutdown hooks run, then the port still answers: probes 200, anything else 503; then it is closed', async () => {
    let hookRunning!: () => void;
    const hookStarted = new Promise<void>((resolve) => (hookRunning = resolve));
    let finishHook!: () => void;
    const app = createHttpApp({
      logger,
      readiness: { database: async () => {} },
      routes: () => {},
    });
    const server = await startServer(app, {
      host: '127.0.0.1',
      port: 0,
      logger,
      onShutdown: [
        async () => {
          hookRunning();
          await new Promise<void>((resolve) => (finishHook = resolve));
        },
      ],
    });
    const closing = server.close();
    await hookStarted;
    for (const path of ['/readyz', '/healthz', '/readyz?verbose=1']) {
      const probe = await fetch(`${server.url}${path}`);
      expect(probe.status).toBe(200);
      expect(await probe.json()).toEqual({ status: 'stopping' });
      expect(probe.headers.get('connection')).toBe('close');
    }
    const other = await fetch(`${server.url}/echo`, { method: 'POST', body: '{}' });
    expect(other.status).toBe(503);
    expect(other.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(await other.json()).toMatchObject({ code: 'service_unavailable' });
    finishHook();
    await closing;
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it('when shutdown runs, then the hooks run in order after the in-flight requests', async () => {
    const order: string[] = [];
    const app = createHttpApp({ logger, routes: () => {} });
    const server = await startServer(app, {
      host: '127.0.0.1',
      port: 0,
      logger,
      onShutdown: [async () => order.push('consumers'), async () => order.push('pools')],
    });
    await server.close();
    expect(order).toEqual(['consumers', 'pools']);
  });
});
