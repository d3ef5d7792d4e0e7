export { migrateDatabase, MigrationError, runMigrations } from './migrations.js';
export {
  createPool,
  isUniqueViolation,
  pingDatabase,
  RETRYABLE,
  withTransaction,
  type Pool,
  type PoolClient,
  type PoolOptions,
  type Queryable,
  type RetryableFailure,
  type TransactionOptions,
} from './pool.js';
