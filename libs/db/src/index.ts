export {
  databaseConnection,
  databaseEnv,
  DATABASE_SSL_MODES,
  type DatabaseConfig,
  type DatabaseConnection,
  type DatabaseSslMode,
} from './connection.js';
export {
  migrateDatabase,
  MigrationError,
  runMigrations,
  type MigrationOptions,
} from './migrations.js';
export {
  createPool,
  isUniqueViolation,
  pingDatabase,
  RETRYABLE,
  withRetries,
  withStatement,
  withTransaction,
  type Pool,
  type PoolClient,
  type PoolOptions,
  type Queryable,
  type RetryableFailure,
  type RetryOptions,
} from './pool.js';
export {
  BatchHold,
  createGroupCommit,
  isQueryCanceled,
  sqlState,
  type BatchWrite,
  type GroupCommit,
  type GroupCommitOptions,
} from './group-commit.js';
export {
  runBatchedDeletion,
  type BatchedDeletionOptions,
  type BatchedDeletionResult,
  type DeletionStep,
} from './batched-deletion.js';
export { timeOrderedUuid } from './ids.js';
export { databaseNow, isoInstant, postgresTimestamp } from './timestamp.js';
