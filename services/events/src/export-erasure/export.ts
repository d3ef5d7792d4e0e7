import { Readable } from 'node:stream';
import type { Pool } from '@herald/db';
import { errors } from '@herald/errors';
import {
  openContactEventsCursor,
  type EventCursor,
  type ExportedEventRow,
} from './data/events-export.js';

/** One line of the export file (docs/api-reference.md#export-and-erasure). */
function exportLine(row: ExportedEventRow): string {
  const data = {
    id: row.id,
    eventName: row.event_name,
    occurredAt: row.occurred_at.toISOString(),
    receivedAt: row.received_at.toISOString(),
    organizationExternalId: row.organization_external_id,
    dedupKey: row.dedup_key,
    properties: row.properties === null ? null : (JSON.parse(row.properties) as unknown),
  };
  return `${JSON.stringify({ type: 'event', data })}\n`;
}

/**
 * A stream of the cursor's rows as JSON Lines, one chunk per batch. It reads the next batch only
 * when its reader wants more (backpressure), and closes the cursor when it ends, fails or is
 * destroyed (a reader that went away), even before its first read.
 */
function linesFrom(cursor: EventCursor, first: ExportedEventRow[]): Readable {
  let pending: ExportedEventRow[] | undefined = first;
  return new Readable({
    read() {
      const batch = pending ? Promise.resolve(pending) : cursor.read();
      pending = undefined;
      batch.then(
        (rows) => {
          if (rows.length === 0) this.push(null);
          else this.push(rows.map(exportLine).join(''));
        },
        (err: Error) => this.destroy(err),
      );
    },
    destroy(err, callback) {
      cursor.close().then(
        () => callback(err),
        (closeError: Error) => callback(err ?? closeError),
      );
    },
  });
}

/** How many exports may stream at once in this process (EXPORT_* settings). */
export interface ExportLimits {
  /** All Tenants together; also the size of the exports' own connection pool. */
  maxConcurrent: number;
  /** One Tenant; a value above `maxConcurrent` acts as `maxConcurrent`. */
  maxPerTenant: number;
}

export const EXPORT_LIMIT_DEFAULTS: ExportLimits = { maxConcurrent: 4, maxPerTenant: 2 };

/** What a refused export's Retry-After says: an export usually takes seconds. */
export const EXPORT_RETRY_AFTER_SECONDS = 5;

/**
 * The export slots of one process. An export holds its slot, and with it one connection of the
 * exports' pool, from before its cursor opens until its stream has closed and the connection is
 * back. A reader may take as long as it likes (up to the cursor's statement timeout), so without
 * a bound a burst of slow readers would hold every connection there is.
 */
export interface ExportSlots {
  /**
   * Takes a slot for an export of the Tenant and returns its release (idempotent). Throws 429
   * `rate_limited` when the Tenant already has its share streaming, else 503
   * `service_unavailable` when every slot is taken; both with Retry-After.
   */
  take(tenantId: string): () => void;
  /** Slots taken now, in all and by the Tenant. */
  inUse(tenantId?: string): number;
}

export function exportSlots(limits: ExportLimits = EXPORT_LIMIT_DEFAULTS): ExportSlots {
  const maxPerTenant = Math.min(limits.maxPerTenant, limits.maxConcurrent);
  const byTenant = new Map<string, number>();
  let total = 0;
  return {
    take(tenantId) {
      const key = tenantId.toLowerCase();
      const mine = byTenant.get(key) ?? 0;
      if (mine >= maxPerTenant) {
        throw errors.rateLimited(
          EXPORT_RETRY_AFTER_SECONDS,
          `this tenant already has ${maxPerTenant} exports streaming; retry after the number of seconds in Retry-After`,
        );
      }
      if (total >= limits.maxConcurrent) {
        throw errors.unavailable(
          'too many exports are streaming; retry after the number of seconds in Retry-After',
        );
      }
      byTenant.set(key, mine + 1);
      total += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total -= 1;
        const left = (byTenant.get(key) ?? 1) - 1;
        if (left > 0) byTenant.set(key, left);
        else byTenant.delete(key);
      };
    },
    inUse: (tenantId) =>
      tenantId === undefined ? total : (byTenant.get(tenantId.toLowerCase()) ?? 0),
  };
}

/**
 * The Events part of a Contact's GDPR export: every Event about the Contact,
 * organization Events that name it included, in the order they were received, as
 * `{"type":"event","data":{…}}` lines streamed from a database cursor. The cursor is opened and
 * its first batch read before this resolves, so a database that is down is an error answer
 * (503), not a cut file. None about the Contact: an empty stream.
 *
 * It takes one of `slots` first (429 or 503 when none is left, see ExportSlots) and gives it
 * back once the stream has closed, however it closes (read to the end, failed, or its reader
 * gone) and once its connection is back in `pool`: the exports' own pool, so that an export,
 * however slowly it is read, never holds a connection that recording needs.
 */
export async function exportContactEvents(
  pool: Pool,
  slots: ExportSlots,
  tenantId: string,
  contactId: string,
): Promise<Readable> {
  const release = slots.take(tenantId);
  let lines: Readable;
  try {
    const cursor = await openContactEventsCursor(pool, tenantId, contactId);
    let first: ExportedEventRow[];
    try {
      first = await cursor.read();
    } catch (err) {
      await cursor.close();
      throw err;
    }
    lines = linesFrom(cursor, first);
  } catch (err) {
    release();
    throw err;
  }
  // 'close' comes after `destroy` has closed the cursor, so the connection is back by then.
  lines.once('close', release);
  return lines;
}
