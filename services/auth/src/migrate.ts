// Applies this service's migrations; run before the service starts (a Job in Kubernetes).
import { fileURLToPath } from 'node:url';
import { createPool, runMigrations } from '@herald/db';
import { createLogger } from '@herald/http';
import { loadMigrationConfig } from './config.js';

const config = loadMigrationConfig();
const logger = createLogger({ service: 'auth-migrate' });
const pool = createPool({
  connectionString: config.DATABASE_URL,
  applicationName: 'herald-auth-migrate',
});
try {
  const applied = await runMigrations(
    pool,
    fileURLToPath(new URL('../migrations', import.meta.url)),
    logger,
  );
  logger.info({ applied: applied.length }, 'migrations up to date');
} finally {
  await pool.end();
}
