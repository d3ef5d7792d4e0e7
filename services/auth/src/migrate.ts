// Applies this service's migrations; run before the service starts (a Job in Kubernetes).
import { fileURLToPath } from 'node:url';
import { databaseConnection, migrateDatabase } from '@herald/db';
import { createLogger } from '@herald/http';
import { loadMigrationConfig } from './config.js';

await migrateDatabase({
  ...databaseConnection(loadMigrationConfig()),
  directory: fileURLToPath(new URL('../migrations', import.meta.url)),
  applicationName: 'herald-auth-migrate',
  logger: createLogger({ service: 'auth-migrate' }),
});
