import { randomUUID } from 'node:crypto';
import { REVOCATION_LIST_WINDOW_SECONDS } from '@herald/auth';
import { withTransaction, type Pool } from '@herald/db';
import { TOPICS, type TenantDeletedMessage } from '@herald/messages';
import { enqueue } from '@herald/outbox';
import type { TenantDataService } from '../clients/tenant-data-services.js';
import {
  claimDeletionLease,
  deleteTenantRow,
  findTenantDeletionState,
  markTenantDeleting,
  pruneDeletedKeyRevocations,
  releaseDeletionLease,
  renewDeletionLease,
  revokeTenantKeys,
  unleasedDeletions,
} from '../data/tenant-deletion-repository.js';

// A Tenant's deletion (docs/operations.md#offboarding-a-tenant), in this order:
//
// 1. The DELETE marks the Tenant as being deleted and revokes all its keys, in one transaction.
//    From then on its keys cannot exchange, every operator route but the DELETE answers 404 for
//    it, and each replica of the services refuses its tokens from its next poll of the revocation
//    list (every second; the API promises 5 s).
// 2. First pass: each of contacts, events and billing deletes all it holds of the Tenant, in
//    batches (its internal route, called until it answers done). The data is gone within seconds.
// 3. The grace (TENANT_DELETION_GRACE_SECONDS, from the DELETE): a request that passed the token
//    check before its replica learned of the revocation may still be writing. The grace covers
//    the revocation's 5 s and the writes of such a request (each statement of it is bounded by the
//    pools' 10 s statement timeout); what they wrote during the first pass is there now.
// 4. Second pass, the same as the first: it deletes what those requests wrote. After it, nothing
//    holding a token of the Tenant can write: new exchanges fail, and every replica refuses the
//    tokens already issued, until they expire.
// 5. One transaction here: the keys' ClientIDs go to deleted_key_revocations (so the revocation
//    list keeps naming them until their tokens have expired: deleting the keys must not make the
//    tokens valid again), the keys and the Tenant's row are deleted, and `tenant.deleted` is
//    enqueued in the outbox, to be published on herald.tenants.deleted once everything is gone.
//
// Every step is idempotent and the mark is durable, so a crash anywhere is resumed from the
// start: by a repeated DELETE, by this process's sweep (every 30 s and at start), or by another
// replica's sweep once the lease of the replica that crashed has expired.

/** What the DELETE answers: when the deletion was first requested. */
export interface DeletionRequest {
  requestedAt: Date;
}

/**
 * Marks the Tenant as being deleted and revokes its keys (step 1); again for a deletion under
 * way, which keeps its first request time. Null when no such Tenant exists (any more).
 */
export function requestTenantDeletion(
  deps: { pool: Pool },
  tenantId: string,
): Promise<DeletionRequest | null> {
  return withTransaction(deps.pool, async (client) => {
    const requestedAt = await markTenantDeleting(client, tenantId);
    return requestedAt === null ? null : { requestedAt };
  });
}

/** Whether the Tenant exists, being deleted or not: the DELETE's 404. */
export async function tenantRowExists(deps: { pool: Pool }, tenantId: string): Promise<boolean> {
  return (await findTenantDeletionState(deps.pool, tenantId)) !== null;
}

interface DeletionLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface TenantDeletionOptions {
  pool: Pool;
  logger: DeletionLogger;
  /** contacts, events, billing: asked in this order, contacts first (see its domain). */
  services: readonly TenantDataService[];
  /** Step 3: from the DELETE to the second pass. */
  graceMs: number;
  /** How long a replica holds a deletion before another may take it over; default 180 s. */
  leaseSeconds?: number;
  /** Between sweeps of deletions no replica runs; default 30 s. */
  sweepIntervalMs?: number;
  /** After a failed attempt, the first wait before the next (doubling to a minute); default 1 s. */
  retryDelayMs?: number;
}

/** How one attempt ended: finished, run by another replica, or no such deletion. */
export type DeletionOutcome = 'done' | 'elsewhere' | 'gone';

export interface TenantDeleter {
  /** Runs the deletion in the background until it is done, unless this process already runs it. */
  kick(tenantId: string): void;
  /** One attempt from the start; rejects when a step fails (its lease is given up). */
  run(tenantId: string): Promise<DeletionOutcome>;
  /** Prunes expired revocations and kicks every deletion no replica runs; resolves after it. */
  sweep(): Promise<void>;
  /** Sweeps now and every `sweepIntervalMs` (resuming deletions left by a crash). */
  start(): void;
  /**
   * Stops sweeping and retrying; attempts under way stop at once (a call in flight is left to
   * finish on its own) and give their lease up. Resolves when they have.
   */
  stop(): Promise<void>;
}

export function createTenantDeleter(options: TenantDeletionOptions): TenantDeleter {
  const { pool, logger, services, graceMs } = options;
  const leaseSeconds = options.leaseSeconds ?? 180;
  const sweepIntervalMs = options.sweepIntervalMs ?? 30_000;
  const retryDelayMs = options.retryDelayMs ?? 1_000;
  const running = new Map<string, Promise<void>>();
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let started = false;

  const checkRunning = () => {
    if (stopping.signal.aborted) throw new Error('the auth service is stopping');
  };
  // Rejects when the process stops, so an attempt need not wait for a slow call to end.
  const stopped = new Promise<never>((_, reject) => {
    stopping.signal.addEventListener('abort', () =>
      reject(new Error('the auth service is stopping')),
    );
  });
  stopped.catch(() => {});

  /** Each service's deletion, called until it says nothing is left. */
  async function pass(tenantId: string): Promise<void> {
    for (const service of services) {
      for (;;) {
        checkRunning();
        await renewDeletionLease(pool, tenantId, leaseSeconds);
        if ((await Promise.race([service.deleteTenantData(tenantId), stopped])).done) break;
      }
    }
  }

  /** Waits until `requestedAt + graceMs` on the database's clock, holding the lease. */
  async function graceAfter(tenantId: string, requestedAt: Date): Promise<void> {
    for (;;) {
      checkRunning();
      const now = await renewDeletionLease(pool, tenantId, leaseSeconds);
      const left = requestedAt.getTime() + graceMs - now.getTime();
      if (left <= 0) return;
      await sleep(Math.min(left, (leaseSeconds * 1000) / 3), stopping.signal);
    }
  }

  async function run(tenantId: string): Promise<DeletionOutcome> {
    checkRunning();
    const lease = await claimDeletionLease(pool, tenantId, leaseSeconds);
    if (!lease) return (await findTenantDeletionState(pool, tenantId)) ? 'elsewhere' : 'gone';
    try {
      // A key created in the same instant as the DELETE (its transaction saw the Tenant live).
      await revokeTenantKeys(pool, tenantId);
      await pass(tenantId);
      await graceAfter(tenantId, lease.requestedAt);
      await pass(tenantId);
      const finished = await withTransaction(pool, async (client) => {
        const requestedAt = await deleteTenantRow(client, tenantId, REVOCATION_LIST_WINDOW_SECONDS);
        if (requestedAt !== null) await enqueue(client, [deletedMessage(tenantId, requestedAt)]);
        return requestedAt !== null;
      });
      if (finished) {
        logger.info(
          { tenantId, seconds: Math.round((Date.now() - lease.requestedAt.getTime()) / 1000) },
          'tenant deleted',
        );
      }
      return 'done';
    } catch (err) {
      await releaseDeletionLease(pool, tenantId).catch(() => {});
      throw err;
    }
  }

  /** Attempts until done, waiting longer after each failure (up to a minute). */
  async function untilDone(tenantId: string): Promise<void> {
    for (let attempt = 1; !stopping.signal.aborted; attempt += 1) {
      try {
        await run(tenantId);
        return;
      } catch (err) {
        if (stopping.signal.aborted) return;
        const delayMs = Math.min(60_000, retryDelayMs * 2 ** (attempt - 1));
        logger.warn(
          { err, tenantId, attempt, retryInMs: delayMs },
          'tenant deletion failed; it goes on from the start after a pause (every step is idempotent)',
        );
        await sleep(delayMs, stopping.signal).catch(() => {});
      }
    }
  }

  function kick(tenantId: string): void {
    if (stopping.signal.aborted || running.has(tenantId)) return;
    running.set(
      tenantId,
      untilDone(tenantId).finally(() => running.delete(tenantId)),
    );
  }

  async function sweep(): Promise<void> {
    await pruneDeletedKeyRevocations(pool, REVOCATION_LIST_WINDOW_SECONDS);
    for (const tenantId of await unleasedDeletions(pool)) kick(tenantId);
  }

  return {
    kick,
    run,
    sweep,
    start() {
      if (started || stopping.signal.aborted) return;
      started = true;
      const loop = () => {
        sweep()
          .catch((err: unknown) => logger.warn({ err }, 'tenant deletion sweep failed'))
          .finally(() => {
            if (stopping.signal.aborted) return;
            timer = setTimeout(loop, sweepIntervalMs);
            timer.unref();
          });
      };
      loop();
    },
    async stop() {
      stopping.abort();
      clearTimeout(timer);
      await Promise.allSettled(running.values());
    },
  };
}

function deletedMessage(tenantId: string, requestedAt: Date) {
  const value: TenantDeletedMessage = {
    version: 1,
    type: 'tenant.deleted',
    messageId: randomUUID(),
    tenantId,
    requestedAt: requestedAt.toISOString(),
    occurredAt: new Date().toISOString(),
  };
  return { topic: TOPICS.tenantsDeleted, key: tenantId, value, subjectId: null };
}

/** Resolves after `ms`, or rejects at once when the signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new Error('the auth service is stopping'));
      return;
    }
    const timeout = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timeout);
      reject(new Error('the auth service is stopping'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
