// bodyAdmission: how many bytes of request bodies a process handles at once; the rest wait in
// arrival order with their bodies unread.
import { afterEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import {
  bodyAdmission,
  createHttpApp,
  jsonBody,
  startServer,
  type BodyAdmission,
  type RunningServer,
} from '../../src/index.js';

const logger = pino({ level: 'silent' });

let running: RunningServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** Handlers entered (by the body's name), each held until the test lets it answer. */
interface Handled {
  entered: string[];
  answer(name: string): void;
}

async function start(maxBytesInFlight: number): Promise<{
  url: string;
  admission: BodyAdmission;
  handled: Handled;
}> {
  const admission = bodyAdmission({ maxBytesInFlight });
  const gates = new Map<string, () => void>();
  const handled: Handled = {
    entered: [],
    answer: (name) => gates.get(name)!(),
  };
  const app = createHttpApp({
    logger,
    routes: (app) => {
      app.post('/work', admission.handler, ...jsonBody(), async (req, res) => {
        const { name } = req.body as { name: string };
        handled.entered.push(name);
        await new Promise<void>((resolve) => gates.set(name, resolve));
        res.json({ name });
      });
    },
  });
  running = await startServer(app, { host: '127.0.0.1', port: 0, logger, shutdownTimeoutMs: 2000 });
  return { url: running.url, admission, handled };
}

/** A body of exactly `bytes` bytes naming the request. */
function body(name: string, bytes: number): string {
  const bare = JSON.stringify({ name, pad: '' });
  return JSON.stringify({ name, pad: 'x'.repeat(bytes - bare.length) });
}

const post = (url: string, name: string, bytes: number) =>
  fetch(`${url}/work`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body(name, bytes),
  });

/** A request the test can drop (destroy) while it waits or is handled. */
function droppable(url: string, name: string, bytes: number): http.ClientRequest {
  const req = http.request(`${url}/work`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
  });
  req.on('error', () => {});
  req.end(body(name, bytes));
  return req;
}

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('bodyAdmission', () => {
  it('when requests fit the budget together, then they are all handled at once', async () => {
    const { url, admission, handled } = await start(1_000);

    const answers = ['a', 'b', 'c'].map((name) => post(url, name, 300));
    await until(() => handled.entered.length === 3);

    expect(admission.state()).toEqual({ bytesInFlight: 900, requestsInFlight: 3, waiting: 0 });
    for (const name of ['a', 'b', 'c']) handled.answer(name);
    expect((await Promise.all(answers)).map((r) => r.status)).toEqual([200, 200, 200]);
    await until(() => admission.state().requestsInFlight === 0);
    expect(admission.state()).toEqual({ bytesInFlight: 0, requestsInFlight: 0, waiting: 0 });
  });

  it('when a request would go over the budget, then it waits unread until earlier ones are answered, in arrival order', async () => {
    const { url, admission, handled } = await start(1_000);

    const a = post(url, 'a', 600);
    await until(() => handled.entered.length === 1);
    // b (600) does not fit beside a; c (100) would, but does not pass b.
    const b = post(url, 'b', 600);
    await until(() => admission.state().waiting === 1);
    const c = post(url, 'c', 100);
    await until(() => admission.state().waiting === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(handled.entered).toEqual(['a']);

    handled.answer('a');
    expect((await a).status).toBe(200);
    await until(() => handled.entered.length === 3);
    expect(handled.entered).toEqual(['a', 'b', 'c']);
    expect(admission.state()).toEqual({ bytesInFlight: 700, requestsInFlight: 2, waiting: 0 });

    handled.answer('b');
    handled.answer('c');
    expect((await b).status).toBe(200);
    expect(await (await c).json()).toEqual({ name: 'c' });
  });

  it('when a body is sent compressed, then it is charged the largest body the parser accepts, not its compressed size', async () => {
    const { url, admission, handled } = await start(4 * 1024 * 1024);
    // About 1,000 KiB of JSON that gzip squeezes about a thousandfold.
    const inflated = body('zipped', 1_000_000);
    const compressed = gzipSync(inflated);
    expect(compressed.length).toBeLessThan(inflated.length / 500);

    const answer = fetch(`${url}/work`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: compressed,
    });
    await until(() => handled.entered.length === 1);

    expect(admission.state()).toEqual({
      bytesInFlight: 1024 * 1024,
      requestsInFlight: 1,
      waiting: 0,
    });
    handled.answer('zipped');
    expect((await answer).status).toBe(200);
  });

  it('when a request is larger than the whole budget, then it goes alone once nothing else is in flight', async () => {
    const { url, admission, handled } = await start(1_000);

    const small = post(url, 'small', 200);
    await until(() => handled.entered.length === 1);
    const large = post(url, 'large', 5_000);
    await until(() => admission.state().waiting === 1);

    handled.answer('small');
    await small;
    await until(() => handled.entered.length === 2);
    // Counted as the whole budget, so nothing joins it.
    expect(admission.state()).toEqual({ bytesInFlight: 1_000, requestsInFlight: 1, waiting: 0 });
    const after = post(url, 'after', 50);
    await until(() => admission.state().waiting === 1);

    handled.answer('large');
    expect((await large).status).toBe(200);
    await until(() => handled.entered.length === 3);
    handled.answer('after');
    expect((await after).status).toBe(200);
  });

  it('when a waiting client goes away, then it leaves the queue and those behind it go on', async () => {
    const { url, admission, handled } = await start(1_000);

    const a = post(url, 'a', 900);
    await until(() => handled.entered.length === 1);
    // Sends its headers and body, then is dropped while it waits.
    const dropped = droppable(url, 'dropped', 900);
    await until(() => admission.state().waiting === 1);
    const c = post(url, 'c', 50);
    await until(() => admission.state().waiting === 2);

    dropped.destroy();
    // c (50) fits beside a (900) now that the head of the queue is gone.
    await until(() => handled.entered.length === 2);
    expect(handled.entered).toEqual(['a', 'c']);
    expect(admission.state()).toEqual({ bytesInFlight: 950, requestsInFlight: 2, waiting: 0 });

    handled.answer('a');
    handled.answer('c');
    await Promise.all([a, c]);
    await until(() => admission.state().requestsInFlight === 0);
    expect(handled.entered).not.toContain('dropped');
  });

  it('when a handled client goes away before its answer, then its bytes are given back', async () => {
    const { url, admission, handled } = await start(1_000);

    const gone = droppable(url, 'gone', 800);
    await until(() => handled.entered.length === 1);
    const next = post(url, 'next', 800);
    await until(() => admission.state().waiting === 1);

    gone.destroy();
    await until(() => handled.entered.length === 2);
    expect(admission.state()).toEqual({ bytesInFlight: 800, requestsInFlight: 1, waiting: 0 });
    handled.answer('next');
    expect((await next).status).toBe(200);
    handled.answer('gone');
  });

  it('when the budget is not a positive integer, then it is refused at start', () => {
    expect(() => bodyAdmission({ maxBytesInFlight: 0 })).toThrow(RangeError);
    expect(() => bodyAdmission({ maxBytesInFlight: 1.5 })).toThrow(RangeError);
  });
});
