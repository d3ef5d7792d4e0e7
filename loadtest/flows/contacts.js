// Contact traffic: upserts by own id and by email, reads by own id and by service id.
import { check } from 'k6';
import { contactBody, newPerson } from '../lib/data.js';
import { send } from '../lib/http.js';
import { bodyJson } from '../lib/response.js';

const byExternalId = (externalId) => `/v1/contacts/${encodeURIComponent(externalId)}`;

/** PUT /v1/contacts/{externalId}; the Contact as answered, or null. */
export function upsert(ctx, person, expect) {
  const res = send(ctx, {
    route: 'contacts.upsert',
    method: 'PUT',
    path: byExternalId(person.externalId),
    body: contactBody(person),
    expect,
  });
  const contact = bodyJson(res);
  const ok = check(contact, {
    'contacts.upsert: the Contact, same externalId': (c) =>
      Boolean(c?.id) && c.externalId === person.externalId,
  });
  return ok ? { id: contact.id, externalId: person.externalId, email: person.email } : null;
}

/** A profile sync: an existing Contact's fields change (200). */
export function update(ctx) {
  upsert(ctx, ctx.pool.withExternalId(), [200]);
}

/** A new Contact by own id (201), kept in the VU's pool for later Events and reads. */
export function create(ctx, person = newPerson(ctx)) {
  const contact = upsert(ctx, person, [201]);
  if (contact) ctx.pool.add(contact);
  return contact;
}

/** POST /v1/contacts: a newsletter sign-up by email (201), or the same address again (200). */
export function upsertByEmail(ctx) {
  const known = Math.random() < 0.5 ? ctx.pool.emailOnly() : null;
  const person = known ?? newPerson(ctx, { withExternalId: false });
  const res = send(ctx, {
    route: 'contacts.upsert_by_email',
    method: 'POST',
    path: '/v1/contacts',
    body: contactBody(person),
    expect: known ? [200] : [201],
  });
  const contact = bodyJson(res);
  const ok = check(contact, {
    'contacts.upsert_by_email: the Contact, without externalId': (c) =>
      Boolean(c?.id) && c.externalId === undefined && (!known || c.id === known.id),
  });
  if (ok && !known) ctx.pool.add({ id: contact.id, email: person.email });
}

/** GET /v1/contacts/{externalId}. */
export function read(ctx) {
  const known = ctx.pool.withExternalId();
  const res = send(ctx, {
    route: 'contacts.get',
    method: 'GET',
    path: byExternalId(known.externalId),
    expect: [200],
  });
  check(bodyJson(res), { 'contacts.get: the Contact asked for': (c) => c?.id === known.id });
}

/** GET /v1/contacts/by-id/{id}. */
export function readById(ctx) {
  const known = ctx.pool.any();
  const res = send(ctx, {
    route: 'contacts.get_by_id',
    method: 'GET',
    path: `/v1/contacts/by-id/${known.id}`,
    expect: [200],
  });
  check(bodyJson(res), { 'contacts.get_by_id: the Contact asked for': (c) => c?.id === known.id });
}
