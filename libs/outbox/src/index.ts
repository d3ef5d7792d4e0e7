export { OUTBOX_RELAYS_TABLE_SQL, OUTBOX_TABLE_SQL } from './schema.js';
export { deletePendingFor, deletePendingOfTenant, enqueue, type OutboxMessage } from './enqueue.js';
export {
  shardLockKey,
  createOutboxRelay,
  type OutboxLogger,
  type OutboxRelay,
  type OutboxRelayOptions,
  type OutboxStats,
} from './relay.js';
export { oldestPendingSeconds } from './relay-metrics.js';
export { MAX_OUTBOX_SHARDS, assignShards, type RelayMember } from './shards.js';
