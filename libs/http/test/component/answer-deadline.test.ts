// The answer deadline of public routes: a handler stuck on a dependency is answered 503 with
// Retry-After in the documented format, its late answer is dropped, and a route that opts out
// (a Contact's export) is left to take its time.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createHttpApp,
  createLogger,
  mountRoutes,
  startServer,
  type RouteTable,
  type RunningServer,
} from '../../src/index.js';

const lines: Array<{ msg?: string; res?: { statusCode?: number } }> = [];
const logger = createLogger({
  service: 'answer-deadline-test',
  destination: new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      cb();
    },
  }),
});

const routes = {
  stuck: {
    method: 'post',
    path: '/v1/stuck',
    audience: 'public',
    access: { kind: 'basic' },
    summary: 'stuck',
  },
  failsLate: {
    method: 'post',
    path: '/v1/fails-late',
    audience: 'public',
    access: { kind: 'basic' },
    summary: 'fails late',
  },
  quick: {
    method: 'get',
    path: '/v1/quick',
    audience: 'public',
    access: { kind: 'basic' },
    summary: 'quick',
  },
  long: {
    method: 'get',
    path: '/v1/long',
    audience: 'public',
    access: { kind: 'basic' },
    summary: 'long',
    answerDeadline: false,
  },
  internal: {
    method: 'get',
    path: '/internal/long',
    audience: 'internal',
    access: { kind: 'basic' },
    summary: 'internal',
  },
} as const satisfies RouteTable;

const DEADLINE_MS = 200;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let lateAnswers = 0;

let running: RunningServer;
beforeAll(async () => {
  const app = createHttpApp({
    logger,
    routes: (app) =>
      mountRoutes(
        app,
        { routes },
        {
          stuck: async (_req, res) => {
            await sleep(DEADLINE_MS * 3);
            lateAnswers += 1;
            res.status(202).json({ recorded: true });
          },
          failsLate: async () => {
            await sleep(DEADLINE_MS * 3);
            throw new Error('the database answered at last, with an error');
          },
          quick: (_req, res) => {
            res.json({ ok: true });
          },
          long: async (_req, res) => {
            await sleep(DEADLINE_MS * 2);
            res.json({ ok: true });
          },
          internal: async (_req, res) => {
            await sleep(DEADLINE_MS * 2);
            res.json({ ok: true });
          },
        },
        {},
        { answerDeadlineMs: DEADLINE_MS },
      ),
  });
  running = await startServer(app, { host: '127.0.0.1', port: 0, logger, shutdownTimeoutMs: 2000 });
});
afterAll(() => running.close());

describe('the answer deadline of public routes', () => {
  it('when the handler has not answered by the deadline, then the caller gets 503 service_unavailable with Retry-After, and the late answer is dropped', async () => {
    const started = Date.now();
    const res = await fetch(`${running.url}/v1/stuck`, { method: 'POST' });
    const tookMs = Date.now() - started;

    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await res.json()).toEqual({
      code: 'service_unavailable',
      message: expect.stringContaining('no answer within 0.2 s'),
    });
    expect(tookMs).toBeLessThan(DEADLINE_MS * 3);

    // The keep-alive connection is still good after the handler's late answer.
    await sleep(DEADLINE_MS * 3);
    expect(lateAnswers).toBe(1);
    const next = await fetch(`${running.url}/v1/quick`);
    expect(next.status).toBe(200);
    expect(lines.filter((l) => l.res?.statusCode === 202)).toHaveLength(0);
  });

  it('when the handler fails after the deadline answered, then the failure is logged as a warning and nothing else is sent', async () => {
    const res = await fetch(`${running.url}/v1/fails-late`, { method: 'POST' });
    expect(res.status).toBe(503);

    await sleep(DEADLINE_MS * 4);
    expect(lines.some((l) => l.msg === 'request failed after it was answered')).toBe(true);
    expect((await fetch(`${running.url}/v1/quick`)).status).toBe(200);
  });

  it('when a route opts out, or is internal, then it answers whenever it is done', async () => {
    expect((await fetch(`${running.url}/v1/long`)).status).toBe(200);
    expect((await fetch(`${running.url}/internal/long`)).status).toBe(200);
  });
});
