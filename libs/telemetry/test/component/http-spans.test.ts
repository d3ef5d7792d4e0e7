// The server span of a real request, exported in-process. Inside jest, require-in-the-middle
// cannot see `import` (jest's module registry bypasses Node's), but it does see
// `process.getBuiltinModule`: taking node:http through it once the SDK has started patches the
// one node:http every server uses, so the http instrumentation runs exactly as in a service.
// Express stays unpatched here; register.test.ts covers it in a real Node process.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { core } from '@opentelemetry/sdk-node';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind, context, shutdownTelemetry, startTelemetry } from '../../src/index.js';

const memory = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor({ exporter: memory });
let server: Server;
let url: string;

beforeAll(async () => {
  startTelemetry({ serviceName: 'http-spans-test', spanProcessors: [processor] });
  const http = process.getBuiltinModule('node:http');
  server = http.createServer((_req, res) => {
    // What the express instrumentation does once a route matched.
    const rpc = core.getRPCMetadata(context.active());
    if (rpc?.type === core.RPCType.HTTP) rpc.route = '/v1/contacts/:externalId';
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await shutdownTelemetry();
});

describe('the server span of an incoming request', () => {
  it('when the path and query hold an email and the caller has an address, then no span carries them, only the route', async () => {
    // The caller's own fetch is not traced: every span exported is the server's.
    await context.with(core.suppressTracing(context.active()), async () => {
      const response = await fetch(
        `${url}/v1/contacts/jane.doe@example.com?email=jane.doe@example.com`,
        {
          headers: { 'x-forwarded-for': '203.0.113.7', 'user-agent': 'jane-doe-phone/1.0' },
        },
      );
      await response.text();
    });
    await processor.forceFlush();
    const spans = memory.getFinishedSpans();

    expect(spans.map((s) => s.kind)).toEqual([SpanKind.SERVER]);
    const [span] = spans;
    expect(span?.name).toBe('GET /v1/contacts/:externalId');
    expect(span?.attributes['http.route']).toBe('/v1/contacts/:externalId');
    expect(span?.attributes['http.response.status_code']).toBe(200);
    const recorded = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events]));
    for (const leak of ['jane', 'example.com', '203.0.113.7', 'email=']) {
      expect(recorded).not.toContain(leak);
    }
    // The socket's address is 127.0.0.1, which server.address also is: check the keys.
    for (const name of ['url.path', 'url.query', 'client.address', 'network.peer.address']) {
      expect(span?.attributes).not.toHaveProperty(name);
    }
  });
});
