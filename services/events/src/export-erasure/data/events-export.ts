import Cursor from 'pg-cursor';
import type { Pool, PoolClient } from '@herald/db';

/** An Event as the export reads it. */
export interface ExportedEventRow {
  id: string;
  event_name: string;
  occurred_at: Date;
  received_at: Date;
  organization_external_id: string | null;
  dedup_key: string | null;
  properties: string | null;
}

/** Rows per cursor read: the most the export holds in memory at once. */
export const EXPORT_BATCH_SIZE = 500;

/**
 * The export may stream for as long as its reader takes, and a cursor's statement lasts until it
 * is closed: the pool's statement timeout (seconds) would cut a slow download, none at all would
 * let a stalled one hold its snapshot for ever.
 */
const EXPORT_STATEMENT_TIMEOUT = '30min';

// Served by events_tenant_contact_idx (tenant_id, contact_id, received_at, id): no sort.
const EXPORT_SQL = `select id, event_name, occurred_at, received_at, organization_external_id,
       dedup_key, properties
from events
where tenant_id = $1 and contact_id = $2
order by received_at, id`;

/** Reads one batch at a time from an open cursor; `close` ends it and frees the connection. */
export interface EventCursor {
  read(): Promise<ExportedEventRow[]>;
  close(): Promise<void>;
}

/**
 * Opens a database cursor over every Event about the Contact (organization Events naming it by
 * contactId included), in the order they were received. Each `read()` fetches the next
 * `batchSize` rows (an empty array at the end): memory stays flat however many Events there are.
 * The cursor holds one pool connection, in one read-only transaction, until `close()`: the
 * service passes the exports' own pool, never recording's (export-erasure/export.ts bounds how
 * many).
 */
export async function openContactEventsCursor(
  pool: Pool,
  tenantId: string,
  contactId: string,
  batchSize = EXPORT_BATCH_SIZE,
): Promise<EventCursor> {
  const client = await pool.connect();
  let cursor: Cursor<ExportedEventRow> | undefined;
  let closed = false;
  // A read in flight when `close` is called finishes first: the protocol has one conversation.
  let reading: Promise<unknown> = Promise.resolve();

  async function close(failure?: Error): Promise<void> {
    if (closed) return;
    closed = true;
    let broken = failure;
    try {
      await reading.catch(() => {});
      if (!broken) {
        await cursor?.close();
        await client.query('commit');
      }
    } catch (err) {
      broken = err as Error;
    } finally {
      // A connection left in an unknown state (mid-cursor, failed transaction) is destroyed.
      client.release(broken);
    }
  }

  try {
    await client.query('begin read only');
    await client.query(`set local statement_timeout = '${EXPORT_STATEMENT_TIMEOUT}'`);
    cursor = submit(client, new Cursor<ExportedEventRow>(EXPORT_SQL, [tenantId, contactId]));
  } catch (err) {
    await close(err as Error);
    throw err;
  }
  const open = cursor;

  return {
    async read() {
      if (closed) throw new Error('the export cursor is closed');
      try {
        const batch = open.read(batchSize);
        reading = batch;
        return await batch;
      } catch (err) {
        await close(err as Error);
        throw err;
      }
    },
    close: () => close(),
  };
}

function submit<T>(client: PoolClient, cursor: Cursor<T>): Cursor<T> {
  return client.query(cursor);
}
