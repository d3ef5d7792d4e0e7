import { isoInstant, timeOrderedUuid } from '@herald/db';
import { meter, messageTraceHeaders, trace, withSpan, type Counter } from '@herald/telemetry';
import { contactLockKey } from '../export-erasure/data/erasure-fence.js';
import {
  RECEIVED_AT_PLACEHOLDER,
  type BatchEvent,
  type BatchRequest,
} from './data/record-batch.js';
import { hashDedupKey } from './dedup-key.js';
import type { EventInput, EventRoute } from './event-batch.js';
import { eventRecorded } from './event-messages.js';
import {
  identityQuery,
  isResolved,
  refuse,
  unresolvedItem,
  type IdentityResolver,
} from './identities.js';
import type { Recorder } from './recording-batcher.js';

/** A dedup claim committed to PostgreSQL, for the fast path to remember. */
export interface CommittedClaim {
  dedupKey: string;
  /** hashDedupKey(dedupKey) when already computed, so that it is hashed once per Event. */
  dedupKeyHash?: string;
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
  /**
   * The keys among `dedupKeys` that are certainly claimed in the Tenant right now; `hashes`, when
   * given, holds hashDedupKey of each key, already computed.
   */
  claimed(
    tenantId: string,
    dedupKeys: readonly string[],
    hashes?: readonly string[],
  ): Promise<Set<string>>;
  /** Remembers claims just committed until their window ends. Best effort. */
  remember(tenantId: string, claims: readonly CommittedClaim[]): Promise<void>;
}

export interface RecordingDeps {
  /**
   * Writes each request's transaction, batched with those of concurrent requests:
   * `createRecorder` of `recording-batcher.ts` (wired in `app.ts`).
   */
  recorder: Recorder;
  /**
   * The projection of Contacts' identities first, the contacts service for what it lacks:
   * `identity-projection/projected-identity-resolver.ts` (wired in `index.ts`).
   */
  resolveIdentities: IdentityResolver;
  /** The dedup fast path: `clients/redis-dedup-cache.ts` (wired in `app.ts`). */
  dedupCache: DedupCache;
  metrics: RecordingMetrics;
}

/** Domain facts, by route (never by Tenant or anything personal). */
export interface RecordingMetrics {
  accepted: Counter;
  recorded: Counter;
  /** Events skipped as duplicates, by where: `request`, `redis` (fast path), `postgresql`. */
  dedupHits: Counter;
  /** Events refused as unresolved (the items of a 422). */
  unresolved: Counter;
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
    dedupHits: m.createCounter('events.dedup.hits', {
      unit: '{event}',
      description:
        'Events not written because their dedupKey was already claimed, by store: request (repeated in the request), redis (the fast path), postgresql (the authority)',
    }),
    unresolved: m.createCounter('events.identity.unresolved', {
      unit: '{event}',
      description:
        'Events refused (422) because the Contact or organization they name does not exist or was erased meanwhile',
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

/** An Event that may need recording, with its dedupKey's hash (computed once, here). */
interface Candidate extends ResolvedEvent {
  dedupKeyHash: string | null;
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
  if (unresolved.length > 0) {
    deps.metrics.unresolved.add(unresolved.length, { route });
    refuse(unresolved);
  }
  return events.map((event, index) => ({ index, event, contactId: answers[index]!.contactId }));
}

/**
 * Step 2: the Events that may still need recording. A dedupKey repeated inside the request keeps
 * its first Event; a key the fast path knows as claimed is a certain duplicate and never reaches
 * PostgreSQL. The rest is decided there.
 */
async function withoutKnownDuplicates(
  deps: RecordingDeps,
  route: EventRoute,
  tenantId: string,
  events: readonly ResolvedEvent[],
): Promise<Candidate[]> {
  const hashes = new Map<string, string>();
  const firsts: Candidate[] = [];
  for (const resolved of events) {
    const { dedupKey } = resolved.event;
    if (dedupKey === undefined) {
      firsts.push({ ...resolved, dedupKeyHash: null });
    } else if (!hashes.has(dedupKey)) {
      const dedupKeyHash = hashDedupKey(dedupKey);
      hashes.set(dedupKey, dedupKeyHash);
      firsts.push({ ...resolved, dedupKeyHash });
    }
  }
  if (firsts.length < events.length) {
    deps.metrics.dedupHits.add(events.length - firsts.length, { route, store: 'request' });
  }
  const known = await deps.dedupCache.claimed(tenantId, [...hashes.keys()], [...hashes.values()]);
  if (known.size === 0) return firsts;
  const candidates = firsts.filter(
    ({ event }) => event.dedupKey === undefined || !known.has(event.dedupKey),
  );
  deps.metrics.dedupHits.add(firsts.length - candidates.length, { route, store: 'redis' });
  return candidates;
}

function batchEvent(route: EventRoute, tenantId: string, candidate: Candidate): BatchEvent {
  const { event, contactId } = candidate;
  const row = {
    id: timeOrderedUuid(),
    contactId,
    organizationExternalId: event.organizationExternalId ?? null,
    eventName: event.eventName,
    occurredAt: isoInstant(event.occurredAt),
    dedupKey: event.dedupKey ?? null,
    properties: event.properties === undefined ? null : JSON.stringify(event.properties),
  };
  // Without its receivedAt and properties, which the transaction puts in (RECEIVED_AT_PLACEHOLDER).
  const message = eventRecorded(
    tenantId,
    route === 'by-organization',
    row,
    null,
    RECEIVED_AT_PLACEHOLDER,
  );
  return {
    row,
    dedupKeyHash: candidate.dedupKeyHash,
    messageKey: message.key,
    messageValue: JSON.stringify(message.value),
  };
}

/**
 * Step 3, one transaction for the request, all or nothing, written in a batch with those of
 * concurrent requests (see recording-batcher.ts): hold every Contact's lock shared and refuse
 * Events about a Contact erased meanwhile (422); claim the dedupKeys (a key held by a committed
 * claim inside its window makes its Event a duplicate); write the Events, catalog their names and
 * enqueue their messages.
 */
function transactionOf(
  route: EventRoute,
  tenantId: string,
  candidates: readonly Candidate[],
  resolved: readonly ResolvedEvent[],
): BatchRequest {
  const lockKeys = new Set<string>();
  const contacts = new Map<string, boolean>();
  for (const { contactId } of candidates) {
    // Once per Contact: its lock key is a SHA-256, and an array names a Contact many times.
    if (contactId === null || contacts.has(contactId)) continue;
    contacts.set(contactId, true);
    lockKeys.add(contactLockKey(tenantId, contactId));
  }
  // Every Contact of the request is checked, so that a refusal lists every Event about an
  // erased one, duplicates skipped before this step included.
  for (const { contactId } of resolved) {
    if (contactId !== null && !contacts.has(contactId)) contacts.set(contactId, false);
  }
  const events = candidates.map((candidate) => batchEvent(route, tenantId, candidate));
  // The messages carry the request's trace context, as enqueue adds it (never baggage).
  const headers = messageTraceHeaders();
  return {
    tenantId,
    lockKeys: [...lockKeys]
      .map(BigInt)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map(String),
    contacts: [...contacts].map(([contactId, candidate]) => ({ contactId, candidate })),
    claims: events
      .flatMap(({ row, dedupKeyHash }) =>
        dedupKeyHash === null ? [] : [{ dedupKeyHash, eventId: row.id }],
      )
      .sort((a, b) =>
        a.dedupKeyHash < b.dedupKeyHash ? -1 : a.dedupKeyHash > b.dedupKeyHash ? 1 : 0,
      ),
    events,
    headers: JSON.stringify(headers),
  };
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
      const candidates = await withoutKnownDuplicates(deps, route, tenantId, resolved);
      let recorded = 0;
      if (candidates.length > 0) {
        const transaction = transactionOf(route, tenantId, candidates, resolved);
        // In a sampled trace, the wait for the batch that commits this request's rows is a span:
        // the PostgreSQL write, whatever the pg instrumentation does. The batch's db.transaction
        // is its child when the batch's sampled requests are all of this trace (the recorder).
        const outcome = trace.getActiveSpan()?.isRecording()
          ? await withSpan(
              'events.write',
              {
                'db.system.name': 'postgresql',
                'herald.event_count': transaction.events.length,
              },
              () => deps.recorder.record(transaction),
            )
          : await deps.recorder.record(transaction);
        if (outcome.status === 'refused') {
          const erased = resolved
            .filter((e) => e.contactId !== null && outcome.erased.has(e.contactId))
            .map(({ index, event }) => unresolvedItem(index, event));
          deps.metrics.unresolved.add(erased.length, { route });
          refuse(erased);
        }
        const written = transaction.events.filter((e) => !outcome.lost.has(e.row.id));
        recorded = written.length;
        if (written.length < transaction.events.length) {
          deps.metrics.dedupHits.add(transaction.events.length - written.length, {
            route,
            store: 'postgresql',
          });
        }
        const remainingMs = outcome.remainingMs - (performance.now() - outcome.committedAt);
        await deps.dedupCache.remember(
          tenantId,
          written.flatMap(({ row, dedupKeyHash }) =>
            dedupKeyHash === null
              ? []
              : [{ dedupKey: row.dedupKey!, dedupKeyHash, eventId: row.id, remainingMs }],
          ),
        );
      }
      span.setAttribute('herald.recorded_count', recorded);
      deps.metrics.accepted.add(events.length, { route });
      deps.metrics.recorded.add(recorded, { route });
      return { accepted: events.length, recorded };
    },
  );
}
