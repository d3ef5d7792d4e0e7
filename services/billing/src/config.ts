import {
  adminTokenEnv,
  refuseSharedTokens,
  serviceCallersEnv,
  serviceTokenEnv,
} from '@herald/auth';
import { httpServerEnv, int, loadConfig, url, z } from '@herald/config';
import { databaseEnv } from '@herald/db';
import { kafkaEnv } from '@herald/kafka';
import { redisEnv } from '@herald/redis';

export const DEFAULT_PORT = 18084;

/** What the migration command needs too. */
const setupEnv = {
  ...databaseEnv('postgres://herald@127.0.0.1:55432/herald_billing'),
  ...kafkaEnv,
};

/** Every variable the service reads; its manifest lists them from here. */
export const configSchema = z
  .object({
    ...httpServerEnv(DEFAULT_PORT),
    ...setupEnv,
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).default(10),
    /** Where the subscription state is mirrored for every service's write check. */
    ...redisEnv,
    ...adminTokenEnv,
    /** Its own token for the auth service; who may call its internal route. */
    ...serviceTokenEnv,
    ...serviceCallersEnv,
    /** The auth service, asked whether a Tenant exists (operator routes). */
    SERVICE_URL_AUTH: url('http://127.0.0.1:18081'),
    /** Consecutive failed payments that suspend a Tenant (3 by default). */
    BILLING_SUSPEND_AFTER_FAILURES: int(3, 1),
  })
  .superRefine(refuseSharedTokens);

export type BillingConfig = Readonly<z.output<typeof configSchema>>;

export function loadBillingConfig(
  env: Record<string, string | undefined> = process.env,
): BillingConfig {
  return loadConfig(configSchema, env);
}

export function loadMigrationConfig(env: Record<string, string | undefined> = process.env) {
  return loadConfig(z.object(setupEnv), env);
}
