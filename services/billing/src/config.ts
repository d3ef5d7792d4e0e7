import {
  adminTokenEnv,
  refuseSharedTokens,
  serviceCallersEnv,
  serviceTokenEnv,
} from '@herald/auth';
import { httpServerEnv, int, loadConfig, url, z } from '@herald/config';
import { databaseEnv } from '@herald/db';
import { localServiceUrl, SERVICE_PORTS } from '@herald/internal-api';
import { kafkaEnv } from '@herald/kafka';
import { redisEnv } from '@herald/redis';

/** What the migration command reads. */
const setupEnv = {
  ...databaseEnv('postgres://herald@127.0.0.1:55432/herald_billing'),
  ...kafkaEnv,
};

/** Every variable the service reads; its manifest lists them from here. */
export const configSchema = z
  .object({
    ...httpServerEnv(SERVICE_PORTS.billing),
    ...setupEnv,
    DATABASE_POOL_MAX: z.coerce
      .number()
      .int()
      .min(1)
      .default(10)
      .describe('connections per replica'),
    /** Where the subscription state is mirrored for every service's write check. */
    ...redisEnv,
    ...adminTokenEnv,
    /** Its own token for the auth service; who may call its internal route. */
    ...serviceTokenEnv,
    ...serviceCallersEnv,
    SERVICE_URL_AUTH: url(localServiceUrl('auth')).describe(
      'the auth service, asked whether a Tenant exists (operator routes)',
    ),
    BILLING_SUSPEND_AFTER_FAILURES: int(3, 1).describe(
      'consecutive failed payments that suspend a Tenant',
    ),
  })
  .superRefine(refuseSharedTokens);

export type BillingConfig = Readonly<z.output<typeof configSchema>>;

export function loadBillingConfig(
  env: Record<string, string | undefined> = process.env,
): BillingConfig {
  return loadConfig(configSchema, env);
}

/** Every variable the migration command (src/migrate.ts) reads. */
export const migrationConfigSchema = z.object(setupEnv);

export function loadMigrationConfig(env: Record<string, string | undefined> = process.env) {
  return loadConfig(migrationConfigSchema, env);
}
