// Property-based test of the identity rules (docs/contacts.md#identity-rules,
// docs/api-reference.md#contacts-and-identities): random sequences of upserts by externalId and by
// email, reads and erasures, run against the real service (in-process, the real database, a
// fresh Tenant per run) and checked step by step against a small in-memory model of the rules.
//
// The model is the oracle. For each command it states the status and the resulting Contact (id,
// externalId, email, optional fields, whether updatedAt moves); after each command the Tenant's
// rows and tombstones must equal the model's; after the sequence every Contact is read back by id
// and by externalId, and the outbox holds, per Contact, exactly the messages the model announced
// (a contact.updated only for a real change). Some commands are two writes sent at once: their
// answers and the state after them must match one of the two orders of the writes (one Contact per
// new email or externalId, however they race).
//
// The alphabets are small on purpose (three externalIds, three email addresses written in several
// cases), so that claims, conflicts and case-insensitive matches happen in most runs.
//
// A failure prints fast-check's seed, path and replayPath; to replay it:
//   HERALD_FC_SEED=<seed> HERALD_FC_PATH=<path> HERALD_FC_REPLAY_PATH=<replayPath> npm test -- test/component/identity-properties.test.ts
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as fc from 'fast-check';
import { startContactsService, TIMESTAMP, UUID, type TestContactsService } from '../support.js';

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService();
});
afterAll(() => svc.close());

// ---------------------------------------------------------------------------------------------
// Alphabets

/** ExternalIds are exact values: `u1` and `U1` are two ids; `crm/7` goes through %2F. */
const EXTERNAL_IDS = ['u1', 'U1', 'crm/7'] as const;
/** Three addresses, each in several cases. */
const EMAILS = [
  'ann@example.com',
  'ANN@example.com',
  'Ann@Example.Com',
  'bob@example.com',
  'Bob@EXAMPLE.com',
  'cy@example.com',
] as const;
const NAMES = ['Ada', 'Bea'] as const;
const PHONES = ['+4915112345678', '+12025550123'] as const;
const TIME_ZONES = ['UTC', 'Europe/Berlin'] as const;

// ---------------------------------------------------------------------------------------------
// Commands

/** A write's body: an optional field left out keeps its value, null clears it. */
interface Write {
  email: string;
  name?: string | null;
  phone?: string | null;
  timeZone?: string | null;
}

/** Which id a by-id command names, decided when it runs (ids are the server's). */
type IdRef =
  | { kind: 'known'; n: number; upper: boolean }
  | { kind: 'unknown'; id: string }
  | { kind: 'malformed' };

type WriteCmd =
  | { op: 'put'; externalId: string; write: Write }
  | { op: 'post'; write: Write }
  | { op: 'erase'; externalId: string }
  | { op: 'eraseById'; ref: IdRef };
type Cmd =
  | WriteCmd
  | { op: 'get'; externalId: string }
  | { op: 'getById'; ref: IdRef }
  /** The run's last PUT or POST sent again (a repeat changes nothing); a GET when none. */
  | { op: 'again' }
  | { op: 'both'; a: WriteCmd; b: WriteCmd };

const describeRef = (ref: IdRef) =>
  ref.kind === 'known'
    ? `ids[${ref.n}]${ref.upper ? '.toUpperCase()' : ''}`
    : ref.kind === 'unknown'
      ? ref.id
      : 'not-a-uuid';

function describeCmd(cmd: Cmd): string {
  switch (cmd.op) {
    case 'put':
      return `PUT /v1/contacts/${cmd.externalId} ${JSON.stringify(cmd.write)}`;
    case 'post':
      return `POST /v1/contacts ${JSON.stringify(cmd.write)}`;
    case 'get':
      return `GET /v1/contacts/${cmd.externalId}`;
    case 'getById':
      return `GET /v1/contacts/by-id/${describeRef(cmd.ref)}`;
    case 'erase':
      return `POST /v1/contacts/${cmd.externalId}/erase`;
    case 'eraseById':
      return `POST /v1/contacts/by-id/${describeRef(cmd.ref)}/erase`;
    case 'again':
      return 'AGAIN (the last PUT or POST)';
    case 'both':
      return `AT ONCE [${describeCmd(cmd.a)} | ${describeCmd(cmd.b)}]`;
  }
}

const optional = <T>(values: readonly T[]) => fc.constantFrom<T | null>(null, ...values);
const writeArb: fc.Arbitrary<Write> = fc.record(
  {
    email: fc.constantFrom(...EMAILS),
    name: optional(NAMES),
    phone: optional(PHONES),
    timeZone: optional(TIME_ZONES),
  },
  { requiredKeys: ['email'] },
);
const externalIdArb = fc.constantFrom(...EXTERNAL_IDS);
const refArb: fc.Arbitrary<IdRef> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('known' as const),
      n: fc.nat(30),
      upper: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('unknown' as const), id: fc.uuid({ version: 4 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'malformed' as const }) },
);
const putArb = fc.record({
  op: fc.constant('put' as const),
  externalId: externalIdArb,
  write: writeArb,
});
const postArb = fc.record({ op: fc.constant('post' as const), write: writeArb });
const eraseArb = fc.record({ op: fc.constant('erase' as const), externalId: externalIdArb });
const eraseByIdArb = fc.record({ op: fc.constant('eraseById' as const), ref: refArb });
const writeCmdArb: fc.Arbitrary<WriteCmd> = fc.oneof(
  { weight: 4, arbitrary: putArb },
  { weight: 3, arbitrary: postArb },
  { weight: 1, arbitrary: eraseArb },
  { weight: 1, arbitrary: eraseByIdArb },
);
const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 6, arbitrary: putArb },
  { weight: 5, arbitrary: postArb },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('get' as const), externalId: externalIdArb }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('getById' as const), ref: refArb }) },
  { weight: 1, arbitrary: eraseArb },
  { weight: 1, arbitrary: eraseByIdArb },
  { weight: 2, arbitrary: fc.constant({ op: 'again' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('both' as const), a: writeCmdArb, b: writeCmdArb }),
  },
);

// ---------------------------------------------------------------------------------------------
// The model

interface ModelContact {
  id: string;
  externalId: string | null;
  email: string;
  name: string | null;
  phone: string | null;
  timeZone: string | null;
  /** Learned from the service's answers: the model cannot know the clock. */
  createdAt: string;
  updatedAt: string;
}

/** An outbox row the model expects, `value` as a jest matcher. */
interface ExpectedMessage {
  topic: string;
  key: string;
  subjectId: string | null;
  value: unknown;
}

interface Model {
  tenantId: string;
  live: ModelContact[];
  /** Ids of erased Contacts (their tombstones). */
  erased: string[];
  /** Every id the service ever gave a Contact of the Tenant, in order. */
  ids: string[];
  outbox: ExpectedMessage[];
  /** The last PUT or POST sent, for `again`. */
  lastWrite: Extract<Cmd, { op: 'put' | 'post' }> | null;
}

/** The answer of one request: status and parsed body (null when empty). */
interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Emails match case-insensitively: the model's own statement of it, for this ASCII alphabet. */
const sameEmail = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The Contact object of the API: absent fields left out. */
function present(c: ModelContact) {
  return {
    id: c.id,
    ...(c.externalId === null ? {} : { externalId: c.externalId }),
    email: c.email,
    ...(c.name === null ? {} : { name: c.name }),
    ...(c.phone === null ? {} : { phone: c.phone }),
    ...(c.timeZone === null ? {} : { timeZone: c.timeZone }),
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

const changedMessage = (
  tenantId: string,
  type: 'contact.created' | 'contact.updated',
  c: ModelContact,
): ExpectedMessage => ({
  topic: 'herald.contacts.changed',
  key: c.id,
  subjectId: c.id,
  value: {
    version: 1,
    type,
    messageId: expect.stringMatching(UUID),
    tenantId,
    occurredAt: c.updatedAt,
    contact: present(c),
  },
});

/** Fields after a write: left out keeps the stored value, null clears it. */
const merged = (current: ModelContact | null, w: Write) => ({
  email: w.email,
  name: w.name === undefined ? (current?.name ?? null) : w.name,
  phone: w.phone === undefined ? (current?.phone ?? null) : w.phone,
  timeZone: w.timeZone === undefined ? (current?.timeZone ?? null) : w.timeZone,
});

const expectError = (answer: Answer, status: number, code: string) => {
  expect(answer.status).toBe(status);
  expect(answer.body).toStrictEqual({ code, message: expect.any(String) });
};

/** A new Contact: 201, a fresh id, createdAt = updatedAt, one contact.created message. */
function created(
  m: Model,
  fields: Omit<ModelContact, 'id' | 'createdAt' | 'updatedAt'>,
  answer: Answer,
): Model {
  expect(answer.status).toBe(201);
  const placeholder = { ...fields, id: '', createdAt: '', updatedAt: '' };
  expect(answer.body).toStrictEqual({
    ...present(placeholder),
    id: expect.stringMatching(UUID),
    createdAt: expect.stringMatching(TIMESTAMP),
    updatedAt: expect.stringMatching(TIMESTAMP),
  });
  const { id, createdAt, updatedAt } = answer.body as Record<string, string>;
  expect(updatedAt).toBe(createdAt);
  expect(m.ids).not.toContain(id);
  const contact: ModelContact = {
    ...fields,
    id: id!,
    createdAt: createdAt!,
    updatedAt: updatedAt!,
  };
  return {
    ...m,
    live: [...m.live, contact],
    ids: [...m.ids, contact.id],
    outbox: [...m.outbox, changedMessage(m.tenantId, 'contact.created', contact)],
  };
}

/**
 * An existing Contact written: 200, same id and createdAt. Only a real change moves updatedAt
 * and announces contact.updated; a repeat answers the stored Contact unchanged.
 */
function updated(
  m: Model,
  current: ModelContact,
  fields: Pick<ModelContact, 'externalId' | 'email' | 'name' | 'phone' | 'timeZone'>,
  answer: Answer,
  sequential: boolean,
): Model {
  expect(answer.status).toBe(200);
  const next: ModelContact = { ...current, ...fields };
  if (isDeepStrictEqual(next, current)) {
    expect(answer.body).toStrictEqual(present(current));
    return m;
  }
  expect(answer.body).toStrictEqual({
    ...present(next),
    updatedAt: expect.stringMatching(TIMESTAMP),
  });
  const updatedAt = answer.body.updatedAt as string;
  // Strictly ordered writes: each starts after the previous answer. (Two writes at once may be
  // stamped with their transactions' start times in the other order; not asserted there.)
  if (sequential) expect(updatedAt >= current.updatedAt).toBe(true);
  const after = { ...next, updatedAt };
  return {
    ...m,
    live: m.live.map((c) => (c.id === current.id ? after : c)),
    outbox: [...m.outbox, changedMessage(m.tenantId, 'contact.updated', after)],
  };
}

/** Erased: gone from reads, a tombstone kept, its unsent messages dropped, two new ones. */
function erased(m: Model, contact: ModelContact, answer: Answer): Model {
  expect(answer.status).toBe(204);
  expect(answer.body).toBeNull();
  return {
    ...m,
    live: m.live.filter((c) => c.id !== contact.id),
    erased: [...m.erased, contact.id],
    outbox: [
      ...m.outbox.filter((msg) => msg.subjectId !== contact.id),
      { topic: 'herald.contacts.changed', key: contact.id, subjectId: null, value: null },
      {
        topic: 'herald.contacts.erased',
        key: contact.id,
        subjectId: null,
        value: {
          version: 1,
          type: 'contact.erased',
          messageId: expect.stringMatching(UUID),
          tenantId: m.tenantId,
          contactId: contact.id,
          occurredAt: expect.stringMatching(TIMESTAMP),
        },
      },
    ],
  };
}

/** The path segment a by-id command sends, from the ids known before it runs. */
function idSegment(m: Model, ref: IdRef): string {
  if (ref.kind === 'malformed') return 'not-a-uuid';
  if (ref.kind === 'unknown' || m.ids.length === 0) {
    return ref.kind === 'unknown' ? ref.id : '00000000-0000-4000-8000-000000000000';
  }
  const id = m.ids[ref.n % m.ids.length]!;
  return ref.upper ? id.toUpperCase() : id;
}

/**
 * The rules (docs/api-reference.md#contacts-and-identities) as the oracle: checks the answer
 * of `cmd` against the model and returns the model after it (never changes `m`). Throws on any
 * difference. `segment` is the by-id path segment the command was sent with.
 */
function step(
  m: Model,
  cmd: WriteCmd | Cmd,
  segment: string,
  answer: Answer,
  sequential: boolean,
): Model {
  switch (cmd.op) {
    case 'put': {
      const owner = m.live.find((c) => c.externalId === cmd.externalId);
      const holder = m.live.find((c) => sameEmail(c.email, cmd.write.email));
      if (owner) {
        // Same externalId again: that Contact updated, unless another Contact holds the email.
        if (holder && holder.id !== owner.id) {
          expectError(answer, 409, 'conflict');
          return m;
        }
        const fields = { externalId: cmd.externalId, ...merged(owner, cmd.write) };
        return updated(m, owner, fields, answer, sequential);
      }
      if (!holder) {
        return created(m, { externalId: cmd.externalId, ...merged(null, cmd.write) }, answer);
      }
      if (holder.externalId === null) {
        // The Contact created by email alone gains the externalId (same id, nothing merged).
        const fields = { externalId: cmd.externalId, ...merged(holder, cmd.write) };
        return updated(m, holder, fields, answer, sequential);
      }
      // The email belongs to a Contact with a different externalId.
      expectError(answer, 409, 'conflict');
      return m;
    }
    case 'post': {
      const holder = m.live.find((c) => sameEmail(c.email, cmd.write.email));
      if (!holder) return created(m, { externalId: null, ...merged(null, cmd.write) }, answer);
      // Updated; its externalId, if any, is kept; the email is stored as last written.
      const fields = { externalId: holder.externalId, ...merged(holder, cmd.write) };
      return updated(m, holder, fields, answer, sequential);
    }
    case 'get': {
      const owner = m.live.find((c) => c.externalId === cmd.externalId);
      if (!owner) expectError(answer, 404, 'not_found');
      else {
        expect(answer.status).toBe(200);
        expect(answer.body).toStrictEqual(present(owner));
      }
      return m;
    }
    case 'getById': {
      // Ids compare case-insensitively (a uuid); an erased or never-known id names nothing.
      const contact = m.live.find((c) => c.id === segment.toLowerCase());
      if (!contact) expectError(answer, 404, 'not_found');
      else {
        expect(answer.status).toBe(200);
        expect(answer.body).toStrictEqual(present(contact));
      }
      return m;
    }
    case 'erase': {
      // By externalId: the Contact that has it, else (never known or already erased) 404.
      const owner = m.live.find((c) => c.externalId === cmd.externalId);
      if (!owner) {
        expectError(answer, 404, 'not_found');
        return m;
      }
      return erased(m, owner, answer);
    }
    case 'eraseById': {
      // By id: a tombstone answers 204 again; an id that never named a Contact is a 404.
      const id = segment.toLowerCase();
      if (m.erased.includes(id)) {
        expect(answer.status).toBe(204);
        expect(answer.body).toBeNull();
        return m;
      }
      const contact = m.live.find((c) => c.id === id);
      if (!contact) {
        expectError(answer, 404, 'not_found');
        return m;
      }
      return erased(m, contact, answer);
    }
    case 'again':
    case 'both':
      throw new Error('step() takes one command');
  }
}

// ---------------------------------------------------------------------------------------------
// The real service

interface Real {
  tenantId: string;
  token: string;
}

const enc = (externalId: string) => encodeURIComponent(externalId);

/** With HERALD_FC_STATS set, how often each command met each answer (to see what runs cover). */
const coverage = new Map<string, number>();
const count = (label: string) => coverage.set(label, (coverage.get(label) ?? 0) + 1);
afterAll(() => {
  if (!process.env.HERALD_FC_STATS) return;
  const lines = [...coverage].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => `${k}: ${n}`);
  console.log(`commands by answer:\n${lines.join('\n')}`);
});

async function send(real: Real, cmd: WriteCmd | Cmd, segment: string): Promise<Answer> {
  const { token } = real;
  let res: Response;
  switch (cmd.op) {
    case 'put':
      res = await svc.request('PUT', `/v1/contacts/${enc(cmd.externalId)}`, {
        token,
        body: cmd.write,
      });
      break;
    case 'post':
      res = await svc.request('POST', '/v1/contacts', { token, body: cmd.write });
      break;
    case 'get':
      res = await svc.request('GET', `/v1/contacts/${enc(cmd.externalId)}`, { token });
      break;
    case 'getById':
      res = await svc.request('GET', `/v1/contacts/by-id/${segment}`, { token });
      break;
    case 'erase':
      res = await svc.request('POST', `/v1/contacts/${enc(cmd.externalId)}/erase`, { token });
      break;
    case 'eraseById':
      res = await svc.request('POST', `/v1/contacts/by-id/${segment}/erase`, { token });
      break;
    case 'again':
    case 'both':
      throw new Error('send() takes one command');
  }
  const text = await res.text();
  count(`${cmd.op} ${res.status}`);
  return { status: res.status, body: text === '' ? null : JSON.parse(text) };
}

/** The Tenant's rows and tombstones, in the model's terms, sorted by id. */
async function storedContacts(tenantId: string) {
  const [rows, tombstones] = await Promise.all([
    svc.pool.query<{
      id: string;
      external_id: string | null;
      email: string;
      email_key: string;
      name: string | null;
      phone: string | null;
      time_zone: string | null;
      created_at: Date;
      updated_at: Date;
    }>(
      `select id, external_id, email, email_key, name, phone, time_zone, created_at, updated_at
       from contacts where tenant_id = $1 order by id`,
      [tenantId],
    ),
    svc.pool.query<{ id: string }>(
      'select id from contact_tombstones where tenant_id = $1 order by id',
      [tenantId],
    ),
  ]);
  return {
    contacts: rows.rows.map((r) => ({
      id: r.id,
      externalId: r.external_id,
      email: r.email,
      emailKey: r.email_key,
      name: r.name,
      phone: r.phone,
      timeZone: r.time_zone,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    })),
    tombstones: tombstones.rows.map((r) => r.id),
  };
}

/** What the database must hold for the model. */
const expectedStored = (m: Model) => ({
  contacts: [...m.live]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((c) => ({ ...c, emailKey: c.email.toLowerCase() })),
  tombstones: [...m.erased].sort(),
});

function attempt<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Runs one command (or two at once) and returns the model after it; throws on a mismatch. */
async function perform(m: Model, command: Cmd, real: Real): Promise<Model> {
  const cmd: Cmd =
    command.op === 'again' ? (m.lastWrite ?? { op: 'get', externalId: 'u1' }) : command;
  if (cmd.op === 'put' || cmd.op === 'post') m = { ...m, lastWrite: cmd };
  if (cmd.op !== 'both') {
    const segment = 'ref' in cmd ? idSegment(m, cmd.ref) : '';
    const answer = await send(real, cmd, segment);
    const next = attempt(() => step(m, cmd, segment, answer, true));
    if (!next.ok) {
      throw new Error(
        `${describeCmd(cmd)} answered ${answer.status} ${JSON.stringify(answer.body)}, ` +
          `which the model does not allow:\n${message(next.error)}`,
      );
    }
    expect(await storedContacts(real.tenantId)).toStrictEqual(expectedStored(next.value));
    return next.value;
  }
  // Two writes at once: they must behave as if run one after the other, in some order, and the
  // database must hold what that order leaves.
  const segA = 'ref' in cmd.a ? idSegment(m, cmd.a.ref) : '';
  const segB = 'ref' in cmd.b ? idSegment(m, cmd.b.ref) : '';
  const [answerA, answerB] = await Promise.all([send(real, cmd.a, segA), send(real, cmd.b, segB)]);
  const stored = await storedContacts(real.tenantId);
  const orders = [
    attempt(() => step(step(m, cmd.a, segA, answerA, false), cmd.b, segB, answerB, false)),
    attempt(() => step(step(m, cmd.b, segB, answerB, false), cmd.a, segA, answerA, false)),
  ];
  const fitting = orders.find((o) => o.ok && isDeepStrictEqual(expectedStored(o.value), stored));
  if (fitting?.ok) return fitting.value;
  throw new Error(
    `${describeCmd(cmd)} answered ${answerA.status} ${JSON.stringify(answerA.body)} and ` +
      `${answerB.status} ${JSON.stringify(answerB.body)}, and the database holds ` +
      `${JSON.stringify(stored)}: no order of the two writes explains it.\n` +
      orders
        .map((o, i) =>
          o.ok
            ? `order ${i === 0 ? 'a,b' : 'b,a'}: the answers fit, the database should hold ${JSON.stringify(expectedStored(o.value))}`
            : `order ${i === 0 ? 'a,b' : 'b,a'}: ${message(o.error)}`,
        )
        .join('\n'),
  );
}

/** After the sequence: every Contact read back, every freed name 404, the outbox per Contact. */
async function expectReadBack(m: Model, real: Real): Promise<void> {
  const { token } = real;
  const read = async (path: string) => {
    const res = await svc.request('GET', path, { token });
    const text = await res.text();
    return { status: res.status, body: text === '' ? null : JSON.parse(text) };
  };
  for (const c of m.live) {
    expect(await read(`/v1/contacts/by-id/${c.id}`)).toStrictEqual({
      status: 200,
      body: present(c),
    });
  }
  for (const externalId of EXTERNAL_IDS) {
    const owner = m.live.find((c) => c.externalId === externalId);
    const answer = await read(`/v1/contacts/${enc(externalId)}`);
    if (owner) expect(answer).toStrictEqual({ status: 200, body: present(owner) });
    else expect(answer.status).toBe(404);
  }
  for (const id of m.erased) expect((await read(`/v1/contacts/by-id/${id}`)).status).toBe(404);

  // The outbox, per Contact in the order written (Kafka keeps order per key only).
  const { rows } = await svc.pool.query<{
    topic: string;
    key: string;
    value: string | null;
    subject_id: string | null;
  }>('select topic, key, value, subject_id from outbox where key = any($1::text[]) order by id', [
    m.ids,
  ]);
  for (const id of m.ids) {
    const actual = rows
      .filter((r) => r.key === id)
      .map((r) => ({
        topic: r.topic,
        key: r.key,
        subjectId: r.subject_id,
        value: r.value === null ? null : JSON.parse(r.value),
      }));
    expect(actual).toStrictEqual(m.outbox.filter((msg) => msg.key === id));
  }
}

// ---------------------------------------------------------------------------------------------
// The property

interface Box {
  model: Model;
}

class Step implements fc.AsyncCommand<Box, Real> {
  constructor(readonly cmd: Cmd) {}
  check = () => true;
  async run(box: Box, real: Real): Promise<void> {
    box.model = await perform(box.model, this.cmd, real);
  }
  toString = () => describeCmd(this.cmd);
}

const env = process.env;
const NUM_RUNS = Number(env.HERALD_FC_RUNS ?? 40);
const MAX_COMMANDS = 15;

describe('identity rules, as a property', () => {
  it('any sequence of upserts, reads and erasures answers and stores what the rules say', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.commands([cmdArb.map((cmd) => new Step(cmd))], {
          maxCommands: MAX_COMMANDS,
          size: 'max',
          ...(env.HERALD_FC_REPLAY_PATH ? { replayPath: env.HERALD_FC_REPLAY_PATH } : {}),
        }),
        async (commands) => {
          const { tenantId, token } = svc.newTenant();
          count(`runs of ${[...commands].length} commands`);
          const box: Box = {
            model: { tenantId, live: [], erased: [], ids: [], outbox: [], lastWrite: null },
          };
          const real: Real = { tenantId, token };
          await fc.asyncModelRun(() => ({ model: box, real }), commands);
          await expectReadBack(box.model, real);
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
