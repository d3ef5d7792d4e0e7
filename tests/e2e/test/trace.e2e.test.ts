// One request's trace, end to end, as the local stack's trace receiver wrote it
// (<data dir>/traces/spans.jsonl, docs/local-stack.md): a Contact upsert and an Event recorded
// through the ingress, each with a sampled W3C `traceparent` of a fresh trace id, as a caller
// that traces its own work sends them. The stack samples parent-based, so these requests are
// traced whatever its own ratio (0 by default).
//
// What one trace must hold, parent links included: the service's server span, a child of the
// caller's span; for the Event, `events.record`, the identity call to contacts under it (client
// span in events, server span in contacts; the by-email route always asks contacts, while the
// by-contact-id and by-external-id routes may be answered by the events service's own projection
// and make no call), and `events.write`, the request's wait for the batch that writes its rows,
// with that batch's `db.transaction` under it; for the Contact, its `db.transaction`; the
// PostgreSQL query spans too when the stack loads the pg instrumentation
// (HERALD_OTEL_CLIENT_SPANS=pg). The outbox relay's `outbox publish` of the message is in the same
// trace, a child of the span that enqueued it (a batch whose sampled messages all come from one
// trace is a child of it; one shared by several traces would be a root span linked to each), with
// messaging attributes; its child is the message's producer span (`send <topic>`), and the Kafka
// record's `traceparent` is that producer span's: the request's trace goes on to the consumers.
// No span may hold a raw request path, the caller's address, or the Contact's email or
// externalId.
//
// The trees found are written to <data dir>/test-output/trace-tree.txt for a person to read.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { IDENTITY_RESOLUTION_PATH } from '@herald/internal-api';
import { TOPICS } from '@herald/messages';
import { watchTenant, type Published, type TenantWatch } from '@herald/testing';
import { accessToken, call, newTenant, repoRoot, runCommand } from './support.js';

const dataDir = path.resolve(repoRoot, process.env.HERALD_DATA_DIR || '.herald');
const spansFile = path.join(dataDir, 'traces', 'spans.jsonl');
const treeFile = path.join(dataDir, 'test-output', 'trace-tree.txt');

/** A line of spans.jsonl (tools/stack/src/trace-receiver.mjs). */
interface RecordedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: string;
  service: string | null;
  durationMs: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string; attributes: Record<string, unknown> }>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  status: { code: string; message?: string };
}

function readSpans(): RecordedSpan[] {
  const spans: RecordedSpan[] = [];
  for (const file of [`${spansFile}.1`, spansFile]) {
    let content: string;
    try {
      content = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of content.split('\n')) {
      if (line === '') continue;
      try {
        spans.push(JSON.parse(line) as RecordedSpan);
      } catch {
        // the receiver is still writing this line
      }
    }
  }
  return spans;
}

/** Polls the receiver's file until `find` returns something; fails with `what` after 45 s. */
async function waitFor<T>(what: string, find: (spans: RecordedSpan[]) => T | undefined) {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const found = find(readSpans());
    if (found !== undefined) return found;
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: not in ${spansFile} within 45 s (does the stack export its spans to its ` +
          'trace receiver? `npm run stack -- status` lists it)',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

/** One trace's spans, with its tree. */
class Trace {
  readonly byId: Map<string, RecordedSpan>;
  constructor(
    readonly traceId: string,
    readonly spans: RecordedSpan[],
  ) {
    this.byId = new Map(spans.map((s) => [s.spanId, s]));
  }

  static of(all: RecordedSpan[], traceId: string): Trace {
    return new Trace(
      traceId,
      all.filter((s) => s.traceId === traceId),
    );
  }

  find(test: (s: RecordedSpan) => boolean): RecordedSpan | undefined {
    return this.spans.find(test);
  }

  childrenOf(span: RecordedSpan): RecordedSpan[] {
    return this.spans.filter((s) => s.parentSpanId === span.spanId);
  }

  /** True when `ancestor` is on the path from `span` up to its root. */
  descends(span: RecordedSpan, ancestor: RecordedSpan): boolean {
    for (let at = span.parentSpanId; at !== null; at = this.byId.get(at)?.parentSpanId ?? null) {
      if (at === ancestor.spanId) return true;
    }
    return false;
  }
}

/** The outbox relay's publish in `trace` (by `service`), with its producer spans for `topic`. */
function publishIn(trace: Trace, service: string, topic: string) {
  const publish = trace.find((s) => s.name === 'outbox publish' && s.service === service);
  if (!publish) return undefined;
  const sends = trace
    .childrenOf(publish)
    .filter((s) => s.name === `send ${topic}` && s.kind === 'PRODUCER');
  return sends.length > 0 ? { publish, sends } : undefined;
}

/** A pg span's statement (placeholders, never values); '' for other spans. */
function queryText(span: RecordedSpan): string {
  const text = span.attributes['db.query.text'];
  return typeof text === 'string' ? text : '';
}

/** A fresh trace, as a caller's sampled span would start it. */
function callerTrace() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** Whether the stack loaded the pg instrumentation: its metrics are on the events process's port. */
async function pgSpansOn(): Promise<boolean> {
  const registry = JSON.parse(
    readFileSync(path.join(repoRoot, 'tools', 'stack', 'src', 'processes.generated.json'), 'utf8'),
  ) as Array<{ name: string; port: number; metricsPort: number }>;
  const events = registry.find((e) => e.name === 'events')!;
  const moved = Number(process.env.HERALD_EVENTS_PORT || events.port);
  const port = Number(
    process.env.HERALD_EVENTS_METRICS_PORT || moved + (events.metricsPort - events.port),
  );
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  return /^# TYPE db_client_operation_duration /m.test(await res.text());
}

/** On no span: the raw request target, or the caller's address however it is named. */
const NEVER = ['http.target', 'http.url', 'client.address', 'http.client_ip'];
/** On no server span: the raw path and query, the caller's address, port and user agent. */
const NEVER_ON_SERVER = [
  ...NEVER,
  'url.path',
  'url.query',
  'url.full',
  'network.peer.address',
  'network.peer.port',
  'net.peer.ip',
  'net.sock.peer.addr',
  'user_agent.original',
];

/**
 * No span holds the Contact's own values (in its name, attributes, links, events or status),
 * and no span an attribute it must not carry; each server span is named by its route.
 */
function expectNothingPersonal(spans: RecordedSpan[], personal: string[]) {
  const values = personal.flatMap((v) => [v, encodeURIComponent(v)]);
  for (const span of spans) {
    const where = `${span.service} ${span.kind} "${span.name}"`;
    const text = JSON.stringify([span.name, span.attributes, span.links, span.events, span.status]);
    const held = values.filter((v) => text.includes(v));
    const forbidden = span.kind === 'SERVER' ? NEVER_ON_SERVER : NEVER;
    const carried = Object.keys(span.attributes).filter((k) => forbidden.includes(k));
    expect({ where, held, carried }).toEqual({ where, held: [], carried: [] });
    if (span.kind === 'SERVER') {
      expect(span.attributes['http.route']).toEqual(expect.stringMatching(/^\//));
    }
  }
}

/**
 * The relay's publish: a child of the span that enqueued the message, linked to it, with
 * messaging attributes; each send to `topic` with its own.
 */
function expectPublishShape(
  published: { publish: RecordedSpan; sends: RecordedSpan[] },
  enqueuer: RecordedSpan,
  outbox: string,
  topic: string,
) {
  const { publish } = published;
  expect(publish.traceId).toBe(enqueuer.traceId);
  expect(publish.parentSpanId).toBe(enqueuer.spanId);
  expect(publish.links).toContainEqual(
    expect.objectContaining({ traceId: enqueuer.traceId, spanId: enqueuer.spanId }),
  );
  expect(publish.attributes).toMatchObject({
    'outbox.name': outbox,
    'messaging.system': 'kafka',
    'messaging.operation.type': 'send',
    'messaging.operation.name': 'send',
    'messaging.batch.message_count': expect.any(Number),
  });
  for (const send of published.sends) {
    expect(send.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.destination.name': topic,
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
    });
  }
}

/**
 * The record the relay sent for the message names a span of the request's trace: one of the
 * publish's producer spans.
 */
function expectRecordCarries(
  record: Published,
  trace: Trace,
  published: { sends: RecordedSpan[] },
): RecordedSpan {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(record.headers.traceparent ?? '');
  expect(match).not.toBeNull();
  const [, traceId, spanId] = match!;
  expect(traceId).toBe(trace.traceId);
  expect(trace.byId.has(spanId!)).toBe(true);
  const send = published.sends.find((s) => s.spanId === spanId);
  expect(send).toBeDefined();
  expect(record.headers).not.toHaveProperty('baggage');
  return send!;
}

/** The watched record `match` picks, once it arrived; fails after 30 s. */
async function recordOf(watch: TenantWatch, what: string, match: (m: Published) => boolean) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = watch.received.filter(match);
    if (found.length > 0) {
      expect(found).toHaveLength(1);
      return found[0]!;
    }
    if (Date.now() > deadline) throw new Error(`${what}: no such Kafka record within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const trees: string[] = [];

async function keepTree(title: string, traceId: string) {
  const cli = path.join(repoRoot, 'tools', 'stack', 'src', 'cli.mjs');
  const run = await runCommand(process.execPath, [cli, 'traces', traceId]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(`trace ${traceId}`);
  // One trace: no batch of it was shared with another trace.
  expect(run.stdout).not.toContain('linked to ');
  trees.push(`# ${title}\n${run.stdout}`);
  return run.stdout;
}

describe('a request traced end to end', () => {
  let tenantId: string;
  let token: string;
  let pgOn: boolean;
  let eventsWatch: TenantWatch;
  let contactsWatch: TenantWatch;
  /** The Contact the Event names, upserted untraced. */
  const known = {
    externalId: `trace-known-${randomUUID()}`,
    email: `trace-known-${randomUUID().slice(0, 8)}@example.com`,
    id: '',
  };

  beforeAll(async () => {
    tenantId = await newTenant('E2E Trace');
    token = await accessToken(tenantId, ['events:write', 'contacts:write']);
    const res = await call('PUT', `/v1/contacts/${known.externalId}`, token, {
      email: known.email,
    });
    expect(res.status).toBe(201);
    known.id = (await res.json<{ id: string }>()).id;
    [eventsWatch, contactsWatch] = await Promise.all([
      watchTenant(TOPICS.eventsRecorded, tenantId, { clientId: 'e2e-trace', groupPrefix: 'e2e' }),
      watchTenant(TOPICS.contactsChanged, tenantId, { clientId: 'e2e-trace', groupPrefix: 'e2e' }),
    ]);
    pgOn = await pgSpansOn();
  }, 60_000);

  afterAll(async () => {
    await Promise.all([eventsWatch?.stop(), contactsWatch?.stop()]);
    if (trees.length > 0) {
      mkdirSync(path.dirname(treeFile), { recursive: true });
      writeFileSync(treeFile, `${trees.join('\n')}\n`);
    }
  });

  it('when a Contact is upserted with a sampled traceparent, then one trace holds the server span under the caller, its transaction, and the relay publish under the span that enqueued the message, whose producer span the herald.contacts.changed record carries', async () => {
    const caller = callerTrace();
    const externalId = `trace-${randomUUID()}`;
    const email = `trace-${randomUUID().slice(0, 8)}@example.com`;
    const res = await call(
      'PUT',
      `/v1/contacts/${externalId}`,
      token,
      { email },
      { headers: { traceparent: caller.traceparent } },
    );
    expect(res.status).toBe(201);
    const contact = await res.json<{ id: string }>();

    const found = await waitFor('the Contact upsert trace and its publish', (all) => {
      const trace = Trace.of(all, caller.traceId);
      const server = trace.find(
        (s) =>
          s.kind === 'SERVER' &&
          s.service === 'herald-contacts' &&
          s.attributes['http.route'] === '/v1/contacts/:externalId',
      );
      if (!server) return undefined;
      const transaction = trace.find(
        (s) => s.name === 'db.transaction' && s.service === 'herald-contacts',
      );
      if (!transaction) return undefined;
      const call = trace.find((s) => queryText(s).includes('upsert_contact('));
      if (pgOn && !call) return undefined;
      const published = publishIn(trace, 'herald-contacts', TOPICS.contactsChanged);
      const enqueuer = published && trace.byId.get(published.publish.parentSpanId ?? '');
      return enqueuer && { trace, server, transaction, enqueuer, published };
    });
    const { trace, server, transaction, enqueuer, published } = found;

    expect(server).toMatchObject({
      name: 'PUT /v1/contacts/:externalId',
      parentSpanId: caller.spanId,
      attributes: expect.objectContaining({
        'http.request.method': 'PUT',
        'http.response.status_code': 201,
      }),
    });
    // The PostgreSQL transaction, under the request, and the message enqueued inside it.
    expect(trace.descends(transaction, server)).toBe(true);
    expect(transaction.kind).toBe('CLIENT');
    expect(transaction.attributes).toEqual({
      'db.system.name': 'postgresql',
      'db.namespace': 'herald_contacts',
    });
    expect(enqueuer === transaction || trace.descends(enqueuer, transaction)).toBe(true);
    const queries = trace.spans.filter(
      (s) => s.service === 'herald-contacts' && s.name.startsWith('pg.query:'),
    );
    if (pgOn) {
      for (const q of queries) expect(trace.descends(q, server)).toBe(true);
      const texts = queries.map(queryText);
      // One statement, its own transaction: the call that writes the row and its message.
      expect(texts).toEqual([expect.stringContaining('upsert_contact(')]);
      for (const q of queries) expect(q.attributes['db.system.name']).toBe('postgresql');
    } else {
      expect(queries).toEqual([]);
    }

    // The relay's publish, in the request's trace: under the span that enqueued the message.
    expectPublishShape(published, enqueuer, 'contacts', TOPICS.contactsChanged);

    const record = await recordOf(
      contactsWatch,
      TOPICS.contactsChanged,
      (m) => (m.value.contact as { id?: string } | undefined)?.id === contact.id,
    );
    expect(record.key).toBe(contact.id);
    expectRecordCarries(record, trace, published);

    expectNothingPersonal(trace.spans, [externalId, email]);
    const tree = await keepTree('PUT /v1/contacts/:externalId', caller.traceId);
    expect(tree).toContain('PUT /v1/contacts/:externalId  [herald-contacts, server]');
    expect(tree).toContain('outbox publish  [herald-contacts]');
    expect(tree).toContain(`send ${TOPICS.contactsChanged}  [herald-contacts, producer]`);
  }, 90_000);

  it('when an Event is recorded by email with a sampled traceparent, then one trace holds the server span, events.record, the identity call into contacts, the write and its batch transaction, and the relay publish under events.record, whose producer span the herald.events.recorded record carries', async () => {
    const caller = callerTrace();
    const eventName = `Traced ${randomUUID().slice(0, 8)}`;
    const res = await call(
      'POST',
      '/v1/events/by-email',
      token,
      { contactEmail: known.email, eventName, occurredAt: new Date().toISOString() },
      { headers: { traceparent: caller.traceparent } },
    );
    expect(res.status).toBe(202);

    const found = await waitFor('the Event trace and its publish', (all) => {
      const trace = Trace.of(all, caller.traceId);
      const server = trace.find(
        (s) =>
          s.kind === 'SERVER' &&
          s.service === 'herald-events' &&
          s.attributes['http.route'] === '/v1/events/by-email',
      );
      const record = trace.find((s) => s.name === 'events.record' && s.service === 'herald-events');
      const lookup = trace.find(
        (s) =>
          s.kind === 'CLIENT' &&
          s.service === 'herald-events' &&
          s.attributes['url.path'] === IDENTITY_RESOLUTION_PATH,
      );
      const resolve = trace.find(
        (s) =>
          s.kind === 'SERVER' &&
          s.service === 'herald-contacts' &&
          s.attributes['http.route'] === IDENTITY_RESOLUTION_PATH,
      );
      const wait = trace.find((s) => s.name === 'events.write' && s.service === 'herald-events');
      const transaction = trace.find(
        (s) => s.name === 'db.transaction' && s.service === 'herald-events',
      );
      if (!server || !record || !lookup || !resolve || !wait || !transaction) return undefined;
      const write = trace.find(
        (s) => s.service === 'herald-events' && queryText(s).includes('record_events_batch'),
      );
      if (pgOn && !write) return undefined;
      const published = publishIn(trace, 'herald-events-relay', TOPICS.eventsRecorded);
      return (
        published && { trace, server, record, lookup, resolve, wait, transaction, write, published }
      );
    });
    const { trace, server, record, lookup, resolve, wait, transaction, write, published } = found;

    expect(server).toMatchObject({
      name: 'POST /v1/events/by-email',
      parentSpanId: caller.spanId,
      attributes: expect.objectContaining({
        'http.request.method': 'POST',
        'http.response.status_code': 202,
      }),
    });
    expect(trace.descends(record, server)).toBe(true);
    expect(record.attributes).toEqual({
      'herald.route': 'by-email',
      'herald.event_count': 1,
      'herald.recorded_count': 1,
    });
    // events → contacts: the client span under events.record, the contacts server span under it.
    expect(lookup.parentSpanId).toBe(record.spanId);
    expect(lookup.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
    });
    expect(resolve.parentSpanId).toBe(lookup.spanId);
    // The PostgreSQL write: the request's wait for the batch that commits its rows, and under it
    // that batch's transaction (its sampled requests are of this trace alone), linked to it.
    expect(wait.parentSpanId).toBe(record.spanId);
    expect(wait.attributes).toEqual({ 'db.system.name': 'postgresql', 'herald.event_count': 1 });
    expect(transaction.parentSpanId).toBe(wait.spanId);
    expect(transaction.kind).toBe('CLIENT');
    expect(transaction.attributes).toEqual({
      'db.system.name': 'postgresql',
      'db.namespace': 'herald_events',
    });
    expect(transaction.links).toContainEqual(
      expect.objectContaining({ traceId: caller.traceId, spanId: wait.spanId }),
    );

    if (pgOn) {
      expect(trace.descends(write!, transaction)).toBe(true);
      expect(write!.attributes['db.system.name']).toBe('postgresql');
      const contactsQueries = trace.spans.filter(
        (s) => s.service === 'herald-contacts' && s.name.startsWith('pg.query:'),
      );
      expect(contactsQueries.length).toBeGreaterThan(0);
      for (const q of contactsQueries) expect(trace.descends(q, resolve)).toBe(true);
    } else {
      expect(trace.spans.filter((s) => s.name.startsWith('pg.'))).toEqual([]);
    }

    // The relay's publish, in the request's trace: under the span the outbox row's trace context
    // was taken in, events.record.
    expectPublishShape(published, record, 'events', TOPICS.eventsRecorded);

    const recorded = await recordOf(
      eventsWatch,
      TOPICS.eventsRecorded,
      (m) => m.value.eventName === eventName,
    );
    expect(recorded.value.contactId).toBe(known.id);
    expectRecordCarries(recorded, trace, published);

    expectNothingPersonal(trace.spans, [known.externalId, known.email]);
    const tree = await keepTree('POST /v1/events/by-email', caller.traceId);
    expect(tree).toContain('POST /v1/events/by-email  [herald-events, server]');
    expect(tree).toContain('events.record  [herald-events]');
    expect(tree).toContain(`POST ${IDENTITY_RESOLUTION_PATH}  [herald-contacts, server]`);
    expect(tree).toContain('db.transaction  [herald-events, client]');
    expect(tree).toContain('outbox publish  [herald-events-relay]');
    expect(tree).toContain(`send ${TOPICS.eventsRecorded}  [herald-events-relay, producer]`);
  }, 90_000);
  it('when an Event is recorded with a traceparent its caller did not sample, then its Kafka record continues the caller’s trace (unsampled), not a trace of the relay’s own', async () => {
    const caller = callerTrace();
    const eventName = `Untraced ${randomUUID().slice(0, 8)}`;
    const res = await call(
      'POST',
      '/v1/events/by-contact-id',
      token,
      { contactId: known.id, eventName, occurredAt: new Date().toISOString() },
      { headers: { traceparent: caller.traceparent.replace(/-01$/, '-00') } },
    );
    expect(res.status).toBe(202);

    const recorded = await recordOf(
      eventsWatch,
      TOPICS.eventsRecorded,
      (m) => m.value.eventName === eventName,
    );
    // Even when its batch holds a sampled request from elsewhere (which gets producer spans),
    // this record leaves with the context its request stored: the caller's trace, unsampled.
    expect(recorded.headers.traceparent).toMatch(
      new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-00$`),
    );
    expect(recorded.headers).not.toHaveProperty('baggage');
  }, 60_000);
});
