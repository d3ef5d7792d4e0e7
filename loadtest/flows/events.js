// Event traffic: single Events and arrays on the four routes, each with a dedupKey.
import { check } from 'k6';
import { batchMax, batchMin } from '../lib/config.js';
import { batchSize, contactEvent, newPerson, organizationEvent } from '../lib/data.js';
import { send } from '../lib/http.js';
import { bodyJson } from '../lib/response.js';
import { create } from './contacts.js';

/** Each route's identity field, filled from a pool Contact. */
const IDENTITY = {
  'by-contact-id': (c) => ({ contactId: c.id }),
  'by-external-id': (c) => ({ contactExternalId: c.externalId }),
  'by-email': (c) => ({ contactEmail: c.email }),
};

const routeName = (route, batch) => `events.${batch ? 'batch.' : ''}${route.replaceAll('-', '_')}`;

/** POST /v1/events/{route} with one Event or an array; checks `accepted`. */
export function record(ctx, route, body, { batch = Array.isArray(body), expect = [202] } = {}) {
  const name = routeName(route, batch);
  const res = send(ctx, { route: name, method: 'POST', path: `/v1/events/${route}`, body, expect });
  if (expect.includes(202) && res.status === 202) {
    const n = Array.isArray(body) ? body.length : 1;
    check(bodyJson(res), { [`${name}: accepted = Events sent`]: (b) => b?.accepted === n });
  }
  return res;
}

const contactFor = (ctx, route) =>
  route === 'by-external-id' ? ctx.pool.withExternalId() : ctx.pool.any();

/** One Event about a known Contact. */
export const single = (route) => (ctx) =>
  record(ctx, route, contactEvent(ctx, IDENTITY[route](contactFor(ctx, route))));

/** An array from a batch job: BATCH_MIN..BATCH_MAX Events about several Contacts. */
export const batch = (route) => (ctx) => {
  const events = Array.from({ length: batchSize(batchMin, batchMax) }, () =>
    contactEvent(ctx, IDENTITY[route](contactFor(ctx, route))),
  );
  record(ctx, route, events);
};

/** An organization Event, half of them naming the acting Contact. */
export function organization(ctx) {
  const identity = { organizationExternalId: ctx.organizationExternalId };
  if (Math.random() < 0.5) identity.contactId = ctx.pool.any().id;
  record(ctx, 'by-organization', organizationEvent(ctx, identity));
}

/** A sign-up: the Contact is created, then its first Event recorded. */
export function signUp(ctx) {
  const contact = create(ctx);
  if (contact) {
    record(
      ctx,
      'by-external-id',
      contactEvent(ctx, IDENTITY['by-external-id'](contact), 'Signed Up'),
    );
  }
}

/**
 * An Event sent before its Contact exists: 422 unresolved_identity (expected, not an error);
 * the client creates the Contact and resends the same request, same dedupKey, as a client should after a 422.
 */
export function beforeContact(ctx) {
  const person = newPerson(ctx);
  const event = contactEvent(ctx, IDENTITY['by-external-id'](person), 'Trial Started');
  const refused = record(ctx, 'by-external-id', event, { expect: [422] });
  check(bodyJson(refused), {
    'events.by_external_id: 422 lists the unknown Contact': (b) =>
      b?.code === 'unresolved_identity' &&
      b.unresolved?.length === 1 &&
      b.unresolved[0].index === 0 &&
      b.unresolved[0].contactExternalId === person.externalId,
  });
  if (create(ctx, person)) record(ctx, 'by-external-id', event);
}

/** At-least-once delivery: the same Event sent twice (a retry after a lost answer); both are
 *  202 and the second is recorded as a duplicate of the first. */
export function sentTwice(ctx) {
  const event = contactEvent(ctx, IDENTITY['by-contact-id'](ctx.pool.any()));
  record(ctx, 'by-contact-id', event);
  record(ctx, 'by-contact-id', event);
}
