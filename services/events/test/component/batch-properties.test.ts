// Property-based test of recording (docs/events.md#recording, #dedup, and
// docs/api-reference.md#events-and-dedup): random Event batches on all four routes, mixing Events
// about existing Contacts, Events naming Contacts or organizations that do not exist, repeated
// dedupKeys, other routes' identity fields (ignored), resends of the previous request, two requests
// at once and erasures of Contacts, run against the real service (in-process, its own database,
// the real contacts service beside it, a fresh Tenant per run) and checked against a model of
// atomicity and dedup.
//
// The model is the oracle. A request with an unresolved Event is refused as a whole (422, one
// item per unresolved Event in request order, nothing recorded); otherwise it is accepted (202,
// `accepted` counts every Event object) and records, in request order, each Event whose dedupKey is
// new in the Tenant (the first of a key wins, within the request and across requests). After each
// command the Tenant's stored Events, dedup claims, event-name catalog and outbox messages must be
// the model's. Two requests at once must match one of their two orders. An erasure deletes the
// Contact's Events and keeps the claims.
//
// Each run takes a few seconds at most, well inside the 60 s dedup window: no claim expires here.
//
// A failure prints fast-check's seed, path and replayPath; to replay it:
//   HERALD_FC_SEED=<seed> HERALD_FC_PATH=<path> HERALD_FC_REPLAY_PATH=<replayPath> npm test -- test/component/batch-properties.test.ts
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as fc from 'fast-check';
import { hashDedupKey } from '../../src/recording/dedup-key.js';
import { startEventsService, storedState, UUID, type TestEventsService } from '../support.js';

let svc: TestEventsService;
beforeAll(async () => {
  // The contacts service erases through this service's internal route (the real seam).
  svc = await startEventsService({ contactDataSeam: true });
});
afterAll(() => svc.close());

// ---------------------------------------------------------------------------------------------
// The world of each run: three Contacts and one organization, made through the contacts service.

type Label = 'A' | 'B' | 'C';
const LABELS: readonly Label[] = ['A', 'B', 'C'];
/** A and B have externalIds; C was created by email alone. */
const SEED_CONTACTS: Record<Label, { externalId?: string; email: string }> = {
  A: { externalId: 'u-a', email: 'ann@example.com' },
  B: { externalId: 'u-b', email: 'bob@example.com' },
  C: { email: 'cy@example.com' },
};
/** How each route may spell each Contact (`spelling` picks one). */
const EMAIL_SPELLINGS: Record<Label, readonly string[]> = {
  A: ['ann@example.com', 'ANN@Example.COM'],
  B: ['bob@example.com', 'BOB@example.com'],
  C: ['cy@example.com', 'Cy@Example.com'],
};
/** C has no externalId: by externalId it is named by one nobody has. */
const EXTERNAL_ID_OF: Record<Label, string> = { A: 'u-a', B: 'u-b', C: 'u-c' };
const EXISTING_ORGANIZATIONS = ['acme'];
/** Names of no Contact: an id nobody has, a malformed id, an externalId differing in case. */
const UNKNOWN_ID = '00000000-0000-4000-8000-00000000dead';
const GHOST_CONTACT_IDS = [UNKNOWN_ID, 'not-a-uuid'];
const GHOST_EXTERNAL_IDS = ['ghost', 'U-A'];
const GHOST_EMAILS = ['nobody@example.com', 'ann@example.org'];

/** Accepted spellings of occurredAt and what is stored (UTC, milliseconds). */
const OCCURRED: ReadonlyArray<readonly [sent: string, stored: string]> = [
  ['2026-03-04T05:06:07.123Z', '2026-03-04T05:06:07.123Z'],
  ['2026-03-04T07:06:07.123456+02:00', '2026-03-04T05:06:07.123Z'],
  ['2026-03-04t05:06:07z', '2026-03-04T05:06:07.000Z'],
  ['2025-12-31T23:59:59.999-01:00', '2026-01-01T00:59:59.999Z'],
];
const EVENT_NAMES = ['signed_up', 'paid', 'Paid'] as const;
const DEDUP_KEYS = ['k1', 'k2', 'k3', 'k4'] as const;

type Route = 'by-contact-id' | 'by-external-id' | 'by-email' | 'by-organization';
const ROUTES: readonly Route[] = ['by-contact-id', 'by-external-id', 'by-email', 'by-organization'];

// ---------------------------------------------------------------------------------------------
// Commands, as generated (the Contacts' ids are filled in when a command runs)

interface EventSpec {
  /** The Contact the Event names; null: one that does not exist (or, by organization, none). */
  who: Label | null;
  spelling: number;
  organization: 'none' | 'acme' | 'nope';
  eventName: string;
  dedupKey: string | null;
  occurred: number;
  /** Add the other routes' identity fields, naming another Contact: they must be ignored. */
  decoy: boolean;
  /** Extra properties, to check they are stored exactly as sent. */
  extra: boolean;
}

interface RequestSpec {
  route: Route;
  events: EventSpec[];
  /** A single Event object instead of an array of one. */
  single: boolean;
  /**
   * Every Event names only Contacts and organizations that exist (unless erased meanwhile), so
   * that most requests are accepted and dedup is exercised, not only refusals.
   */
  clean: boolean;
}

type Cmd =
  | { op: 'record'; request: RequestSpec }
  | { op: 'again' }
  | { op: 'both'; a: RequestSpec; b: RequestSpec }
  | { op: 'erase'; who: Label };

const eventArb: fc.Arbitrary<EventSpec> = fc.record({
  who: fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom<Label>(...LABELS) },
    { weight: 1, arbitrary: fc.constant(null) },
  ),
  spelling: fc.nat(1),
  organization: fc.oneof(
    { weight: 4, arbitrary: fc.constant('none' as const) },
    { weight: 2, arbitrary: fc.constant('acme' as const) },
    { weight: 1, arbitrary: fc.constant('nope' as const) },
  ),
  eventName: fc.constantFrom(...EVENT_NAMES),
  dedupKey: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom<string>(...DEDUP_KEYS) },
    { weight: 1, arbitrary: fc.constant(null) },
  ),
  occurred: fc.nat(OCCURRED.length - 1),
  decoy: fc.boolean(),
  extra: fc.boolean(),
});
const requestArb: fc.Arbitrary<RequestSpec> = fc.record({
  route: fc.constantFrom(...ROUTES),
  events: fc.array(eventArb, { minLength: 1, maxLength: 6 }),
  single: fc.boolean(),
  clean: fc.oneof(
    { weight: 2, arbitrary: fc.constant(true) },
    { weight: 1, arbitrary: fc.constant(false) },
  ),
});
const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ op: fc.constant('record' as const), request: requestArb }) },
  { weight: 2, arbitrary: fc.constant({ op: 'again' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('both' as const), a: requestArb, b: requestArb }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('erase' as const), who: fc.constantFrom(...LABELS) }),
  },
);

const describeSpec = (r: RequestSpec) =>
  `${r.route}${r.clean ? ' (clean)' : ''} ${r.single && r.events.length === 1 ? '' : '['}${r.events
    .map(
      (e) =>
        `${e.eventName}(${e.who ?? 'nobody'}${e.spelling ? "'" : ''}` +
        `${e.organization === 'none' ? '' : ` org=${e.organization}`}` +
        `${e.dedupKey === null ? '' : ` key=${e.dedupKey}`}${e.decoy ? ' +decoys' : ''})`,
    )
    .join(', ')}${r.single && r.events.length === 1 ? '' : ']'}`;

function describeCmd(cmd: Cmd): string {
  switch (cmd.op) {
    case 'record':
      return `POST ${describeSpec(cmd.request)}`;
    case 'again':
      return 'AGAIN (the last request, resent as it was)';
    case 'both':
      return `AT ONCE [${describeSpec(cmd.a)} | ${describeSpec(cmd.b)}]`;
    case 'erase':
      return `ERASE ${cmd.who}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Requests as sent

type EventBody = Record<string, unknown>;

interface Sent {
  route: Route;
  body: EventBody | EventBody[];
}

interface ModelContact {
  label: Label;
  id: string;
  externalId: string | null;
  email: string;
  erased: boolean;
}

/** The Event as it would be if it named only what exists. */
function cleaned(route: Route, e: EventSpec): EventSpec {
  let who = e.who;
  if (who === null && route !== 'by-organization') who = 'A';
  if (who === 'C' && route === 'by-external-id') who = 'B';
  return { ...e, who, organization: e.organization === 'nope' ? 'acme' : e.organization };
}

/** The Event objects of a request, from its spec and the run's Contacts. */
function build(contacts: readonly ModelContact[], spec: RequestSpec, nextTag: () => string): Sent {
  const byLabel = (label: Label) => contacts.find((c) => c.label === label)!;
  const events = spec.events.map((generated): EventBody => {
    const e = spec.clean ? cleaned(spec.route, generated) : generated;
    const pick = <T>(values: readonly T[]) => values[e.spelling % values.length]!;
    const contactIdOf = (label: Label | null) => {
      if (label === null) return pick(GHOST_CONTACT_IDS);
      const id = byLabel(label).id;
      return e.spelling ? id.toUpperCase() : id;
    };
    const body: EventBody = {};
    // Another Contact's identities in the fields this route does not read.
    const other = byLabel(e.who === 'A' ? 'B' : 'A');
    if (e.decoy) {
      if (spec.route !== 'by-contact-id' && spec.route !== 'by-organization') {
        body.contactId = other.id;
      }
      if (spec.route !== 'by-external-id') body.contactExternalId = other.externalId;
      if (spec.route !== 'by-email') body.contactEmail = other.email;
    }
    switch (spec.route) {
      case 'by-contact-id':
        body.contactId = contactIdOf(e.who);
        break;
      case 'by-external-id':
        body.contactExternalId = e.who === null ? pick(GHOST_EXTERNAL_IDS) : EXTERNAL_ID_OF[e.who];
        break;
      case 'by-email':
        body.contactEmail = e.who === null ? pick(GHOST_EMAILS) : pick(EMAIL_SPELLINGS[e.who]);
        break;
      case 'by-organization':
        // The acting Contact is optional here: `who` null sends none.
        if (e.who !== null) body.contactId = contactIdOf(e.who);
        break;
    }
    const organization =
      spec.route === 'by-organization' && e.organization === 'none' ? 'acme' : e.organization;
    if (organization !== 'none') body.organizationExternalId = organization;
    body.eventName = e.eventName;
    body.occurredAt = OCCURRED[e.occurred]![0];
    if (e.dedupKey !== null) body.dedupKey = e.dedupKey;
    // A tag unique in the run tells which of the Events with one dedupKey was recorded.
    body.properties = e.extra
      ? { tag: nextTag(), z: 1, a: [true, { b: null }], ['__proto__']: 'kept', é: 'ü' }
      : { tag: nextTag() };
    return body;
  });
  return {
    route: spec.route,
    body: spec.single && events.length === 1 ? events[0]! : events,
  };
}

// ---------------------------------------------------------------------------------------------
// The model

/** A stored Event, in the model's terms (the columns the service writes from the request). */
interface ModelEvent {
  contactId: string | null;
  organizationExternalId: string | null;
  eventName: string;
  occurredAt: string;
  dedupKey: string | null;
  properties: string;
}

interface Model {
  tenantId: string;
  contacts: ModelContact[];
  /** The Tenant's recorded Events not erased, in recording order. */
  events: ModelEvent[];
  /** Every dedupKey claimed in the run (the window outlasts the run; erasure keeps claims). */
  claimed: string[];
  /** The event-name catalog. */
  names: string[];
  lastSent: Sent | null;
}

interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const STORED_OCCURRED = new Map(OCCURRED.map(([sent, stored]) => [sent, stored]));

/** The Contact an identity value names, by the route's rule; null when none (or erased). */
function resolveContact(m: Model, route: Route, value: string): ModelContact | null {
  const live = m.contacts.filter((c) => !c.erased);
  switch (route) {
    case 'by-contact-id':
    case 'by-organization':
      // Herald's ids are uuids: any case names the Contact.
      return live.find((c) => c.id === value.toLowerCase()) ?? null;
    case 'by-external-id':
      return live.find((c) => c.externalId === value) ?? null;
    case 'by-email':
      return live.find((c) => c.email.toLowerCase() === value.toLowerCase()) ?? null;
  }
}

/** The one identity field each route reads; the others are ignored. */
const OWN_FIELD: Record<Route, 'contactId' | 'contactExternalId' | 'contactEmail'> = {
  'by-contact-id': 'contactId',
  'by-external-id': 'contactExternalId',
  'by-email': 'contactEmail',
  'by-organization': 'contactId',
};

/**
 * The oracle: checks the answer to `sent` and returns the model after it (never changes `m`);
 * throws on any difference.
 */
function record(m: Model, sent: Sent, answer: Answer): Model {
  const events = Array.isArray(sent.body) ? sent.body : [sent.body];
  const own = OWN_FIELD[sent.route];
  const unresolved: unknown[] = [];
  const resolved: Array<{ event: EventBody; contactId: string | null }> = [];
  events.forEach((event, index) => {
    const identity = event[own] as string | undefined;
    const organization = event.organizationExternalId as string | undefined;
    const contact = identity === undefined ? null : resolveContact(m, sent.route, identity);
    const ok =
      (organization === undefined || EXISTING_ORGANIZATIONS.includes(organization)) &&
      (identity === undefined ? sent.route === 'by-organization' : contact !== null);
    if (ok) resolved.push({ event, contactId: contact?.id ?? null });
    else {
      // As sent for the fields the route reads, null for the others.
      unresolved.push({
        index,
        eventName: event.eventName,
        contactId: own === 'contactId' ? (identity ?? null) : null,
        contactExternalId: own === 'contactExternalId' ? identity : null,
        contactEmail: own === 'contactEmail' ? identity : null,
        organizationExternalId: organization ?? null,
      });
    }
  });
  if (unresolved.length > 0) {
    // All or nothing: the whole request refused, nothing recorded or claimed.
    expect(answer).toStrictEqual({
      status: 422,
      body: { code: 'unresolved_identity', message: expect.any(String), unresolved },
    });
    return m;
  }
  expect(answer).toStrictEqual({ status: 202, body: { accepted: events.length } });
  const next = { ...m, events: [...m.events], claimed: [...m.claimed], names: [...m.names] };
  for (const { event, contactId } of resolved) {
    const dedupKey = (event.dedupKey as string | undefined) ?? null;
    // A key claimed before (earlier in this request or in an earlier one): not recorded again.
    if (dedupKey !== null && next.claimed.includes(dedupKey)) continue;
    if (dedupKey !== null) next.claimed.push(dedupKey);
    const eventName = event.eventName as string;
    next.events.push({
      contactId,
      organizationExternalId: (event.organizationExternalId as string | undefined) ?? null,
      eventName,
      occurredAt: STORED_OCCURRED.get(event.occurredAt as string)!,
      dedupKey,
      properties: JSON.stringify(event.properties),
    });
    if (!next.names.includes(eventName)) next.names.push(eventName);
  }
  return next;
}

/** An erasure: the Contact's Events go (organization Events naming it too); claims stay. */
function erase(m: Model, label: Label, answer: Answer): Model {
  // The first erasure and any retry (a tombstone) answer 204.
  expect(answer).toStrictEqual({ status: 204, body: null });
  const contact = m.contacts.find((c) => c.label === label)!;
  return {
    ...m,
    contacts: m.contacts.map((c) => (c.label === label ? { ...c, erased: true } : c)),
    events: m.events.filter((e) => e.contactId !== contact.id),
  };
}

// ---------------------------------------------------------------------------------------------
// The real service

interface Real {
  tenantId: string;
  token: string;
}

/** With HERALD_FC_STATS set, how often each route met each answer (to see what runs cover). */
const coverage = new Map<string, number>();
const count = (label: string) => coverage.set(label, (coverage.get(label) ?? 0) + 1);
afterAll(() => {
  if (!process.env.HERALD_FC_STATS) return;
  const lines = [...coverage].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => `${k}: ${n}`);
  console.log(`requests by answer:\n${lines.join('\n')}`);
});

async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : JSON.parse(text) };
}

async function send(real: Real, sent: Sent): Promise<Answer> {
  const answer = await answerOf(await svc.record(sent.route, real.token, sent.body));
  count(`${sent.route} ${answer.status}`);
  return answer;
}

/** What the Tenant's tables hold, in the model's terms (order-free where order is not defined). */
async function stored(tenantId: string) {
  const state = await storedState(svc.pool, tenantId);
  const events = state.events.map((e) => ({
    contactId: e.contact_id,
    organizationExternalId: e.organization_external_id,
    eventName: e.event_name,
    occurredAt: e.occurred_at.toISOString(),
    dedupKey: e.dedup_key,
    properties: e.properties!,
  }));
  return {
    raw: state,
    view: {
      events: sortEvents(events),
      claims: state.claims.map((c) => c.dedup_key).sort(),
      names: state.names.map((n) => n.name),
    },
  };
}

const sortEvents = (events: ModelEvent[]) =>
  [...events].sort((a, b) =>
    a.properties < b.properties ? -1 : a.properties > b.properties ? 1 : 0,
  );

/** The same view of the model. */
const expectedView = (m: Model) => ({
  events: sortEvents(m.events),
  claims: m.claimed.map(hashDedupKey).sort(),
  names: [...m.names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
});

/**
 * What follows from the stored Events alone: each claim of a stored Event's key names that Event,
 * and the outbox holds one message per stored Event (none for a duplicate or a refused request),
 * built from it, with the Contact as its subject.
 */
function expectConsistent(tenantId: string, raw: Awaited<ReturnType<typeof stored>>['raw']) {
  for (const e of raw.events) {
    if (e.dedup_key === null) continue;
    const claim = raw.claims.find((c) => c.dedup_key === hashDedupKey(e.dedup_key!));
    expect(claim?.event_id).toBe(e.id);
  }
  const messages = raw.outbox.map((o) => ({
    topic: o.topic,
    key: o.key,
    subjectId: o.subject_id,
    value: JSON.parse(o.value),
  }));
  const expected = raw.events.map((e) => ({
    topic: 'herald.events.recorded',
    key:
      e.contact_id === null
        ? `${tenantId}:organization:${e.organization_external_id}`
        : expect.stringMatching(
            new RegExp(
              `^${tenantId}:(contact:${e.contact_id}|organization:${e.organization_external_id})$`,
            ),
          ),
    subjectId: e.contact_id,
    value: {
      version: 1,
      type: 'event.recorded',
      messageId: e.id,
      tenantId,
      eventId: e.id,
      contactId: e.contact_id,
      organizationExternalId: e.organization_external_id,
      eventName: e.event_name,
      occurredAt: e.occurred_at.toISOString(),
      receivedAt: e.received_at.toISOString(),
      dedupKey: e.dedup_key,
      properties: e.properties === null ? null : JSON.parse(e.properties),
    },
  }));
  const byId = (a: { value: { eventId: string } }, b: { value: { eventId: string } }) =>
    a.value.eventId < b.value.eventId ? -1 : a.value.eventId > b.value.eventId ? 1 : 0;
  expect([...messages].sort(byId)).toStrictEqual([...expected].sort(byId));
  for (const id of raw.events.map((e) => e.id)) expect(id).toMatch(UUID);
}

function attempt<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
const show = (answer: Answer) => `${answer.status} ${JSON.stringify(answer.body)}`;

/** Runs one command and returns the model after it; throws on a mismatch. */
async function perform(m: Model, cmd: Cmd, real: Real, nextTag: () => string): Promise<Model> {
  let next: Model;
  switch (cmd.op) {
    case 'record':
    case 'again': {
      const sent = cmd.op === 'record' ? build(m.contacts, cmd.request, nextTag) : m.lastSent;
      if (sent === null) return m; // nothing sent yet
      const answer = await send(real, sent);
      const result = attempt(() => record({ ...m, lastSent: sent }, sent, answer));
      if (!result.ok) {
        throw new Error(
          `${sent.route} ${JSON.stringify(sent.body)} answered ${show(answer)}, which the model ` +
            `does not allow:\n${message(result.error)}`,
        );
      }
      next = result.value;
      break;
    }
    case 'erase': {
      const contact = m.contacts.find((c) => c.label === cmd.who)!;
      const answer = await answerOf(
        await svc.contacts.request('POST', `/v1/contacts/by-id/${contact.id}/erase`, {
          token: real.token,
        }),
      );
      count(`erase ${answer.status}`);
      next = erase(m, cmd.who, answer);
      break;
    }
    case 'both': {
      // Two requests at once: they must behave as if recorded one after the other, in some
      // order, and the tables must hold what that order leaves.
      const a = build(m.contacts, cmd.a, nextTag);
      const b = build(m.contacts, cmd.b, nextTag);
      const [answerA, answerB] = await Promise.all([send(real, a), send(real, b)]);
      const { raw, view } = await stored(real.tenantId);
      const orders = [
        attempt(() => record(record(m, a, answerA), b, answerB)),
        attempt(() => record(record(m, b, answerB), a, answerA)),
      ];
      const fitting = orders.find((o) => o.ok && isDeepStrictEqual(expectedView(o.value), view));
      if (!fitting?.ok) {
        throw new Error(
          `at once, ${a.route} ${JSON.stringify(a.body)} answered ${show(answerA)} and ` +
            `${b.route} ${JSON.stringify(b.body)} answered ${show(answerB)}; the tables hold ` +
            `${JSON.stringify(view)}: no order of the two requests explains it.\n` +
            orders
              .map((o, i) =>
                o.ok
                  ? `order ${i === 0 ? 'a,b' : 'b,a'}: the answers fit, the tables should hold ${JSON.stringify(expectedView(o.value))}`
                  : `order ${i === 0 ? 'a,b' : 'b,a'}: ${message(o.error)}`,
              )
              .join('\n'),
        );
      }
      expectConsistent(real.tenantId, raw);
      return { ...fitting.value, lastSent: b };
    }
  }
  const { raw, view } = await stored(real.tenantId);
  expect(view).toStrictEqual(expectedView(next));
  expectConsistent(real.tenantId, raw);
  return next;
}

// ---------------------------------------------------------------------------------------------
// The property

interface Box {
  model: Model;
  tags: number;
}

class Step implements fc.AsyncCommand<Box, Real> {
  constructor(readonly cmd: Cmd) {}
  check = () => true;
  async run(box: Box, real: Real): Promise<void> {
    box.model = await perform(box.model, this.cmd, real, () => `t${++box.tags}`);
  }
  toString = () => describeCmd(this.cmd);
}

/** A fresh Tenant with the run's Contacts and organization, and the model of it. */
async function newWorld(): Promise<{ box: Box; real: Real }> {
  const { tenantId, token } = svc.newTenant();
  const contacts: ModelContact[] = [];
  for (const label of LABELS) {
    const fields = SEED_CONTACTS[label];
    const created = await svc.contacts.createContact(tenantId, fields);
    contacts.push({
      label,
      id: created.id,
      externalId: fields.externalId ?? null,
      email: fields.email,
      erased: false,
    });
  }
  for (const organization of EXISTING_ORGANIZATIONS) {
    await svc.contacts.createOrganization(tenantId, organization);
  }
  return {
    box: {
      model: { tenantId, contacts, events: [], claimed: [], names: [], lastSent: null },
      tags: 0,
    },
    real: { tenantId, token },
  };
}

const env = process.env;
const NUM_RUNS = Number(env.HERALD_FC_RUNS ?? 20);
const MAX_COMMANDS = 12;

describe('recording, as a property', () => {
  it('any sequence of Event batches is recorded all or nothing, each dedupKey once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.commands([cmdArb.map((cmd) => new Step(cmd))], {
          maxCommands: MAX_COMMANDS,
          size: 'max',
          ...(env.HERALD_FC_REPLAY_PATH ? { replayPath: env.HERALD_FC_REPLAY_PATH } : {}),
        }),
        async (commands) => {
          const { box, real } = await newWorld();
          await fc.asyncModelRun(() => ({ model: box, real }), commands);
        },
      ),
      {
        numRuns: NUM_RUNS,
        ...(env.HERALD_FC_SEED ? { seed: Number(env.HERALD_FC_SEED) } : {}),
        ...(env.HERALD_FC_PATH ? { path: env.HERALD_FC_PATH } : {}),
        // Shrinking a failure replays sequences: bounded, the best counterexample so far is shown.
        plugins: [fc.interruptAfterTimeLimit(60_000)],
      },
    );
  }, 120_000);
});
