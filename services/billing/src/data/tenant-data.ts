import { withTransaction, type Pool } from '@herald/db';
import { TOPICS } from '@herald/messages';
import { enqueue } from '@herald/outbox';

/**
 * Deletes the Tenant's subscription row and, in the same transaction, enqueues a tombstone (null
 * value) for its key on the compacted herald.subscriptions.changed, so that Kafka's compaction
 * drops the Tenant's states there. Resolves whether there was a row.
 */
export function deleteSubscription(pool: Pool, tenantId: string): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const { rowCount } = await client.query('delete from subscriptions where tenant_id = $1', [
      tenantId,
    ]);
    if (!rowCount) return false;
    await enqueue(client, [{ topic: TOPICS.subscriptionsChanged, key: tenantId, value: null }]);
    return true;
  });
}
