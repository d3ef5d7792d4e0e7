// The trace receiver and the `traces` command's reading, with the SDK's own OTLP exporters (the
// protobuf one the services use by default, and the JSON one) sending to a receiver on a free
// port: what arrives is what the spans were, and the tree shows them in place.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createReceiver } from './trace-receiver.mjs';
import { byTrace, formatTrace, formatTraceList, pickTrace, readSpans } from './traces.mjs';

/** @typedef {import('@opentelemetry/api').HrTime} HrTime */
/**
 * The SDK's span: the API's type does not show what it recorded (its start time).
 * @typedef {import('@opentelemetry/sdk-trace-base').Span} SdkSpan
 */

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-traces-'));
const file = path.join(dir, 'spans.jsonl');
let server;
let url;

before(async () => {
  server = createReceiver(file);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/v1/traces`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A request's trace and a publish linked to it, as one service would export them. */
async function sendTraces(Exporter, service) {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [new SimpleSpanProcessor(new Exporter({ url }))],
  });
  const tracer = provider.getTracer('test');
  const server = tracer.startSpan('POST /v1/things', {
    kind: SpanKind.SERVER,
    attributes: {
      'http.route': '/v1/things',
      'http.response.status_code': 202,
      big: 2 ** 40,
      negative: -3,
      ratio: 0.5,
      ok: true,
      list: ['a', 'b'],
    },
  });
  const inRequest = trace.setSpan(context.active(), server);
  const child = tracer.startSpan('things.record', {}, inRequest);
  child.addEvent('retried', { attempt: 2 });
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'deadlock' });
  child.end();
  server.end();
  // The publish begins after the request, as a relay's does: 1 ms after it by the same clock, so
  // that ordering by start time never meets two equal times.
  const [seconds, nanos] = /** @type {SdkSpan} */ (server).startTime;
  /** @type {HrTime} */
  const later = [seconds + Math.floor((nanos + 1e6) / 1e9), (nanos + 1e6) % 1e9];
  const publish = tracer.startSpan('outbox publish', {
    root: true,
    links: [{ context: child.spanContext() }],
    startTime: later,
  });
  const send = tracer.startSpan(
    'send things',
    { kind: SpanKind.PRODUCER, startTime: later },
    trace.setSpan(context.active(), publish),
  );
  send.end(later);
  publish.end(later);
  await provider.forceFlush();
  await provider.shutdown();
  return { server, child, publish, send };
}

for (const [encoding, Exporter] of [
  ['protobuf', ProtoExporter],
  ['JSON', JsonExporter],
]) {
  test(`spans sent as OTLP ${encoding} are written one a line, as they were`, async () => {
    const sent = await sendTraces(Exporter, `svc-${encoding}`);
    const traceId = sent.server.spanContext().traceId;
    const spans = readSpans(file).filter((s) => s.service === `svc-${encoding}`);
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
    assert.deepEqual(Object.keys(byName).sort(), [
      'POST /v1/things',
      'outbox publish',
      'send things',
      'things.record',
    ]);
    const server = byName['POST /v1/things'];
    assert.equal(server.traceId, traceId);
    assert.equal(server.spanId, sent.server.spanContext().spanId);
    assert.equal(server.parentSpanId, null);
    assert.equal(server.kind, 'SERVER');
    assert.equal(server.scope, 'test');
    assert.deepEqual(server.attributes, {
      'http.route': '/v1/things',
      'http.response.status_code': 202,
      big: 2 ** 40,
      negative: -3,
      ratio: 0.5,
      ok: true,
      list: ['a', 'b'],
    });
    assert.ok(server.durationMs >= 0);
    assert.match(server.start, /^\d{4}-\d\d-\d\dT/);
    const child = byName['things.record'];
    assert.equal(child.parentSpanId, server.spanId);
    assert.equal(child.kind, 'INTERNAL');
    assert.deepEqual(child.status, { code: 'ERROR', message: 'deadlock' });
    assert.deepEqual(
      child.events.map((e) => [e.name, e.attributes]),
      [['retried', { attempt: 2 }]],
    );
    const publish = byName['outbox publish'];
    assert.notEqual(publish.traceId, traceId);
    assert.deepEqual(
      publish.links.map((l) => [l.traceId, l.spanId]),
      [[traceId, child.spanId]],
    );
    assert.equal(byName['send things'].kind, 'PRODUCER');
    assert.equal(byName['send things'].parentSpanId, publish.spanId);
  });
}

test('traces prints a trace as a tree, the traces linked to it (a publish shared with other traces) after it, and finds it by a prefix', async () => {
  const sent = await sendTraces(ProtoExporter, 'svc-tree');
  const traceId = sent.server.spanContext().traceId;
  const traces = byTrace(readSpans(file));
  // The newest trace that does not merely continue another: the request, not its publish.
  assert.equal(pickTrace(traces), traceId);
  assert.equal(pickTrace(traces, traceId.slice(0, 8)), traceId);
  assert.equal(pickTrace(traces, 'ffffffff'), null);
  assert.throws(() => pickTrace(traces, 'not-an-id'), /not a trace id/);
  const lines = formatTrace(traces, traceId).split('\n');
  assert.match(lines[0], new RegExp(`^trace ${traceId}  \\S+  2 spans  `));
  assert.match(lines[1], /^POST \/v1\/things {2}\[svc-tree, server\] {2}\d/);
  assert.match(lines[2], /^└─ things\.record {2}\[svc-tree\] {2}\S+ ms {2}ERROR deadlock$/);
  assert.equal(lines[3], '');
  assert.equal(lines[4], `linked to ${traceId}:`);
  assert.match(lines[6], new RegExp(`^outbox publish .* ⇢ link ${traceId}/`));
  assert.match(lines[7], /^└─ send things {2}\[svc-tree, producer\]/);
  // Oldest first, the newest last: here the publish, begun after the request.
  const list = formatTraceList(traces, 2).split('\n');
  assert.equal(list.length, 2);
  assert.match(list[0], new RegExp(`${traceId} +2 spans .* POST /v1/things \\[svc-tree\\]$`));
  assert.match(list[1], /outbox publish \[svc-tree\]$/);
});

test('traces prints a publish that carried one trace’s messages inside that trace, naming its links but the one to its parent', async () => {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'svc-one-trace' }),
    spanProcessors: [new SimpleSpanProcessor(new ProtoExporter({ url }))],
  });
  const tracer = provider.getTracer('test');
  const server = tracer.startSpan('POST /v1/things', { kind: SpanKind.SERVER });
  const inRequest = trace.setSpan(context.active(), server);
  const first = tracer.startSpan('things.record', {}, inRequest);
  const second = tracer.startSpan('things.more', {}, inRequest);
  first.end();
  second.end();
  server.end();
  const [seconds, nanos] = /** @type {SdkSpan} */ (server).startTime;
  /** @type {HrTime} */
  const later = [seconds + Math.floor((nanos + 1e6) / 1e9), (nanos + 1e6) % 1e9];
  const publish = tracer.startSpan(
    'outbox publish',
    {
      links: [{ context: first.spanContext() }, { context: second.spanContext() }],
      startTime: later,
    },
    trace.setSpan(context.active(), first),
  );
  const send = tracer.startSpan(
    'send things',
    { kind: SpanKind.PRODUCER, startTime: later },
    trace.setSpan(context.active(), publish),
  );
  send.end(later);
  publish.end(later);
  await provider.forceFlush();
  await provider.shutdown();

  const traceId = server.spanContext().traceId;
  const lines = formatTrace(byTrace(readSpans(file)), traceId).split('\n');
  assert.match(lines[0], new RegExp(`^trace ${traceId}  \\S+  5 spans  `));
  assert.equal(lines.length, 6);
  assert.match(lines[1], /^POST \/v1\/things {2}\[svc-one-trace, server\]/);
  assert.match(
    lines[3],
    new RegExp(
      `^│  └─ outbox publish {2}\\[svc-one-trace\\] {2}\\S+ ms {2}⇢ link ${second.spanContext().spanId} \\(things\\.more\\)$`,
    ),
  );
  assert.match(lines[2], /^├─ things\.record {2}\[svc-one-trace\] {2}\S+ ms$/);
  assert.match(lines[4], /^│ {5}└─ send things {2}\[svc-one-trace, producer\]/);
  assert.match(lines[5], /^└─ things\.more {2}\[svc-one-trace\] {2}\S+ ms$/);
});

test('a request the receiver cannot read is refused, and nothing is written', async () => {
  const before = fs.readFileSync(file, 'utf8');
  const bad = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body: Buffer.from([0x0a, 0xff]),
  });
  assert.equal(bad.status, 400);
  const elsewhere = await fetch(url.replace('/v1/traces', '/v1/metrics'), { method: 'POST' });
  assert.equal(elsewhere.status, 404);
  assert.equal(fs.readFileSync(file, 'utf8'), before);
});
