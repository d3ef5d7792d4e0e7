export { OUTBOX_TABLE_SQL } from './schema.js';
export { deletePendingFor, deletePendingOfTenant, enqueue, type OutboxMessage } from './enqueue.js';
export {
  advisoryLockKey,
  createOutboxRelay,
  type OutboxLogger,
  type OutboxRelay,
  type OutboxRelayOptions,
  type OutboxStats,
} from './relay.js';
export { oldestPendingSeconds } from './relay-metrics.js';
