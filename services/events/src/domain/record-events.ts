import { randomUUID } from 'node:crypto';
import { withTransaction, type Pool, type PoolClient } from '@herald/db';
import { errors } from '@herald/errors';
import { enqueue } from '@herald/outbox';
import { meter, withSpan, type Counter } from '@herald/telemetry';
import { claimDedupKeys } from '../data/dedup-claims.js';
import { catalogEventNames } from '../data/event-names-repository.js';
import { insertEvents, type NewEvent } from '../data/events-repository.js';
import { erasedAmong, lockContactsShared } from '../data/erasure-fence.js';
import type { EventInput, EventRoute } from './event-batch.js';
import { eventRecorded } from './event-messages.js';
import {
  identityQuery,
  isResolved,
  refuse,
  unresolvedItem,
  type IdentityResolver,
} from './identities.js';

/** A dedup claim committed to PostgreSQL, for the fast path to remember. */
export interface CommittedClaim {
  dedupKey: string;
  eventId: string;
  /** How long the claim still holds (its window's end), in ms. */
  remainingMs: number;
}

/**
 * The dedup fast path. It only ever holds claims PostgreSQL committed, so a key it knows is
 * certainly a duplicate; a key it does not know is decided by PostgreSQL, which stays the
 * authority. Any failure (its store away, slow, failing) answers "unknown" and is never an error.
 */
export interface DedupCache {
  /** The keys among `dedupKeys` that are certainly claimed in the Tenant right now. */
  claimed(tenantId: string, dedupKeys: readonly string[]): Promise<Set<string>>;
  /** Remembers claims just committed until their window ends. Best effort. */
  remember(tenantId: string, claims: readonly CommittedClaim[]): Promise<void>;
}

export interface RecordingDeps {
  pool: Pool;
  resolveIdentities: IdentityResolver;
  dedupCache: DedupCache;
  /** The dedup window, 60 s. Shorter only in tests. */
  dedupWindowMs: number;
  metrics: RecordingMetrics;
}

/** Domain facts, by route (never by Tenant or anything personal). */
export interface RecordingMetrics {
  accepted: Counter;
  recorded: Counter;
}

/** Made when the app is built, from the meter provider registered by then. */
export function recordingMetrics(): RecordingMetrics {
  const m = meter('herald.events');
  return {
    accepted: m.createCounter('events.accepted', {
      unit: '{event}',
      description: 'Event objects in requests answered 202, duplicates included',
    }),
    recorded: m.createCounter('events.recorded', {
      unit: '{event}',
      description: 'Events written (and announced); duplicates are not',
    }),
  };
}

export interface RecordingOutcome {
  /** `accepted`: every Event object of the request, duplicates included. */
  accepted: number;
  /** Events written now (duplicates of earlier or of each other are not). */
  recorded: number;
}

/** An Event that passed identity resolution, with what it resolved to. */
interface ResolvedEvent {
  index: number;
  event: EventInput;
  contactId: string | null;
}

// The statement timeout: e.g. waiting on the lock of a Contact whose erasure runs long.
const QUERY_CANCELED = '57014';

// A deadlock or serialization failure aborts the whole transaction, which can simply run again.
async function retrying<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  try {
    return await withTransaction(pool, fn, {
      retryOn: ['deadlock', 'serializationFailure'],
      attempts: 3,
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === QUERY_CANCELED) {
      throw errors.unavailable('recording took too long; nothing was recorded; retry later', err);
    }
    throw err;
  }
}

/**
 * Step 1: one call to the contacts service for the whole request. Any Event naming a Contact or
 * organization that does not exist refuses the request (422, nothing recorded).
 */
async function resolveAll(
  deps: RecordingDeps,
  route: EventRoute,
  tenantId: string,
  events: readonly EventInput[],
): Promise<ResolvedEvent[]> {
  const answers = await deps.resolveIdentities(
    tenantId,
    events.map((event) => identityQuery(route, event)),
  );
  const unresolved = events.flatMap((event, index) =>
    isResolved(route, event, answers[index]!) ? [] : [unresolvedItem(index, event)],
  );
  if (unresolved.length > 0) refuse(unresolved);
  return events.map((event, index) => ({ index, event, contactId: answers[index]!.contactId }));
}

/**
 * Step 2: the Events that may still need recording. A dedupKey repeated inside the request keeps
 * its first Event; a key the fast path knows as claimed is a certain duplicate and never reaches
 * PostgreSQL. The rest is decided there.
 */
async function withoutKnownDuplicates(
  deps: RecordingDeps,
  tenantId: string,
  events: readonly ResolvedEvent[],
): Promise<ResolvedEvent[]> {
  const seen = new Set<string>();
  const firsts = events.filter(({ event: { dedupKey } }) => {
    if (dedupKey === undefined) return true;
    if (seen.has(dedupKey)) return false;
    seen.add(dedupKey);
    return true;
  });
  const known = await deps.dedupCache.claimed(tenantId, [...seen]);
  return known.size === 0
    ? firsts
    : firsts.filter(({ event }) => event.dedupKey === undefined || !known.has(event.dedupKey));
}

interface Draft {
  row: NewEvent;
  properties: Record<string, unknown> | null;
}

function draft(route: EventRoute, { event, contactId }: ResolvedEvent): Draft {
  return {
    row: {
      id: randomUUID(),
      contactId,
      organizationExternalId: event.organizationExternalId ?? null,
      eventName: event.eventName,
      occurredAt: new Date(event.occurredAt).toISOString(),
      dedupKey: event.dedupKey ?? null,
      properties: event.properties === undefined ? null : JSON.stringify(event.properties),
    },
    properties: event.properties ?? null,
  };
}

/**
 * Step 3, one transaction, all or nothing: hold every Contact's lock shared and refuse Events
 * about a Contact erased meanwhile (422); claim the dedupKeys (a key held by a committed claim
 * inside its window makes its Event a duplicate); write the Events, catalog their names and
 * enqueue their messages. Returns the claims it committed, for the fast path.
 */
async function recordInTransaction(
  deps: RecordingDeps,
  route: EventRoute,
  tenantId: string,
  candidates: readonly ResolvedEvent[],
  resolved: readonly ResolvedEvent[],
) {
  const contactIdsOf = (events: readonly ResolvedEvent[]) =>
    events.flatMap(({ contactId }) => (contactId === null ? [] : [contactId]));
  const isAbout = (erased: Set<string>) => (e: ResolvedEvent) =>
    e.contactId !== null && erased.has(e.contactId);
  return retrying(deps.pool, async (client) => {
    await lockContactsShared(client, tenantId, contactIdsOf(candidates));
    // Every Contact of the request, so that a refusal lists every Event about an erased one,
    // duplicates skipped before this step included (one item per Event, in request order).
    const erased = await erasedAmong(client, tenantId, contactIdsOf(resolved));
    if (candidates.some(isAbout(erased))) {
      refuse(
        resolved.filter(isAbout(erased)).map(({ index, event }) => unresolvedItem(index, event)),
      );
    }

    const drafts = candidates.map((candidate) => draft(route, candidate));
    const claims = await claimDedupKeys(
      client,
      tenantId,
      drafts.flatMap(({ row }) =>
        row.dedupKey === null ? [] : [{ dedupKey: row.dedupKey, eventId: row.id }],
      ),
      deps.dedupWindowMs,
    );
    const recorded = drafts.filter(({ row }) => row.dedupKey === null || claims.has(row.dedupKey));
    const claimedAt = performance.now();

    const receivedAt = await insertEvents(
      client,
      tenantId,
      recorded.map(({ row }) => row),
    );
    await catalogEventNames(
      client,
      tenantId,
      recorded.map(({ row }) => row.eventName),
    );
    await enqueue(
      client,
      recorded.map(({ row, properties }) =>
        eventRecorded(tenantId, route === 'by-organization', row, properties, receivedAt),
      ),
    );
    return {
      recorded: recorded.length,
      claims: recorded.flatMap(({ row }) =>
        row.dedupKey === null
          ? []
          : [{ dedupKey: row.dedupKey, eventId: row.id, remainingMs: claims.get(row.dedupKey)! }],
      ),
      claimedAt,
    };
  });
}

/**
 * Records a request's Events, all or nothing: resolve every identity, drop the known
 * duplicates, then write the rest in one transaction. After the commit, the new claims go to the
 * dedup fast path, each for what is left of its window.
 */
export function recordEvents(
  deps: RecordingDeps,
  route: EventRoute,
  tenantId: string,
  events: readonly EventInput[],
): Promise<RecordingOutcome> {
  return withSpan(
    'events.record',
    { 'herald.route': route, 'herald.event_count': events.length },
    async (span) => {
      const resolved = await resolveAll(deps, route, tenantId, events);
      const candidates = await withoutKnownDuplicates(deps, tenantId, resolved);
      let recorded = 0;
      if (candidates.length > 0) {
        const outcome = await recordInTransaction(deps, route, tenantId, candidates, resolved);
        recorded = outcome.recorded;
        const elapsed = performance.now() - outcome.claimedAt;
        await deps.dedupCache.remember(
          tenantId,
          outcome.claims.map((c) => ({ ...c, remainingMs: c.remainingMs - elapsed })),
        );
      }
      span.setAttribute('herald.recorded_count', recorded);
      deps.metrics.accepted.add(events.length, { route });
      deps.metrics.recorded.add(recorded, { route });
      return { accepted: events.length, recorded };
    },
  );
}
