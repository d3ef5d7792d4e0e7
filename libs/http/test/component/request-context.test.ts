// A request's trace context where it goes on from a listener: a request that waited in the body
// admission queue is let in from another request's 'close', and its handler and log line must
// still be in its own trace; so must the log line of a request whose caller went away (written on
// the socket's 'close'). process.getBuiltinModule after the SDK started patches node:http as in a
// service (see libs/telemetry/test/component/http-spans.test.ts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { shutdownTelemetry, startTelemetry, trace } from '@herald/telemetry';
import http from 'node:http';
import { pino } from 'pino';
import {
  bodyAdmission,
  createHttpApp,
  jsonBody,
  startServer,
  type RunningServer,
} from '../../src/index.js';

/** The trace id active where a log line was written, as the pino instrumentation reads it. */
const traceIdHere = () => trace.getActiveSpan()?.spanContext().traceId;

const lines: Array<{ msg: string; trace?: string | undefined }> = [];
const logger = pino(
  { mixin: () => ({ trace: traceIdHere() }) },
  { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) },
);

/** The trace id each handler ran in, by the body's name. */
const seen = new Map<string, string | undefined>();
const gates = new Map<string, () => void>();
let running: RunningServer;
let url: string;

beforeAll(async () => {
  startTelemetry({ serviceName: 'request-context-test', spanProcessors: [] });
  process.getBuiltinModule('node:http');
  // One body at a time: a second request waits until the first is answered.
  const admission = bodyAdmission({ maxBytesInFlight: 64 });
  const app = createHttpApp({
    logger,
    routes: (app) => {
      app.post('/work', admission.handler, ...jsonBody(), async (req, res) => {
        const { name } = req.body as { name: string };
        seen.set(name, traceIdHere());
        await new Promise<void>((resolve) => gates.set(name, resolve));
        res.json({ name });
      });
    },
  });
  running = await startServer(app, { host: '127.0.0.1', port: 0, logger, shutdownTimeoutMs: 2000 });
  url = running.url;
});

afterAll(async () => {
  await running.close();
  await shutdownTelemetry();
});

const traceIdOf = (n: number) => n.toString(16).padStart(32, '0');

/**
 * POSTs `{name}` under a sampled traceparent, its body sent in two parts 30 ms apart: the handler
 * runs after a later read of the socket than the one that began the request.
 */
function post(name: string, traceId: string, signal?: AbortSignal): Promise<number> {
  const body = Buffer.from(JSON.stringify({ name, pad: 'x'.repeat(20) }));
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/work`,
      {
        method: 'POST',
        signal,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          traceparent: `00-${traceId}-${'1'.repeat(16)}-01`,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.write(body.subarray(0, 10));
    setTimeout(() => req.end(body.subarray(10)), 30);
  });
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('a request’s trace context across listeners', () => {
  it('when a request waits in the body admission queue and another’s answer lets it in, then its handler and its log line are in its own trace', async () => {
    const first = post('first', traceIdOf(1));
    await until(() => seen.has('first'));
    // Its body does not fit beside the first one's: it waits for the first to be answered.
    const second = post('second', traceIdOf(2));
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.has('second')).toBe(false);

    gates.get('first')!();
    expect(await first).toBe(200);
    await until(() => seen.has('second'));
    gates.get('second')!();
    expect(await second).toBe(200);

    expect(seen.get('first')).toBe(traceIdOf(1));
    expect(seen.get('second')).toBe(traceIdOf(2));
    await until(() => lines.filter((l) => l.msg === 'POST 200').length === 2);
    expect(lines.filter((l) => l.msg === 'POST 200').map((l) => l.trace)).toEqual([
      traceIdOf(1),
      traceIdOf(2),
    ]);
  });

  it('when the caller goes away before the answer, then the request log’s line still carries its trace', async () => {
    const abort = new AbortController();
    const gone = post('gone', traceIdOf(3), abort.signal).catch(() => 'aborted');
    await until(() => seen.has('gone'));
    abort.abort();
    expect(await gone).toBe('aborted');
    // The line is written on the connection's close, which the socket reports, not the handler.
    await until(() => lines.some((l) => l.trace === traceIdOf(3)));
    gates.get('gone')!();
  });
});
