export { migrateDatabase, MigrationError, runMigrations } from './migrations.js';
export {
  createPool,
  isUniqueViolation,
  pingDatabase,
  withTransaction,
  type Pool,
  type PoolClient,
  type PoolOptions,
} from './pool.js';
