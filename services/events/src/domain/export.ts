import { Readable } from 'node:stream';
import type { Pool } from '@herald/db';
import {
  openContactEventsCursor,
  type EventCursor,
  type ExportedEventRow,
} from '../data/events-export.js';

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

/**
 * The Events part of a Contact's GDPR export: every Event about the Contact,
 * organization Events that name it included, in the order they were received, as
 * `{"type":"event","data":{…}}` lines streamed from a database cursor. The cursor is opened and
 * its first batch read before this resolves, so a database that is down is an error answer
 * (503), not a cut file. None about the Contact: an empty stream.
 */
export async function exportContactEvents(
  pool: Pool,
  tenantId: string,
  contactId: string,
): Promise<Readable> {
  const cursor = await openContactEventsCursor(pool, tenantId, contactId);
  let first: ExportedEventRow[];
  try {
    first = await cursor.read();
  } catch (err) {
    await cursor.close();
    throw err;
  }
  return linesFrom(cursor, first);
}
