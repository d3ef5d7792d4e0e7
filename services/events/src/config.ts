import { operatorAndServiceTokensEnv } from '@herald/auth';
import { httpServerEnv, list, loadConfig, url, z } from '@herald/config';
import { publicApiEnv } from '@herald/policy';
import { redisEnv } from '@herald/redis';

export const DEFAULT_PORT = 18083;
const DEFAULT_RELAY_PORT = 18085;

/** What the migration command and the relay need too. */
const setupEnv = {
  DATABASE_URL: url('postgres://herald@127.0.0.1:55432/herald_events'),
  KAFKA_BROKERS: list('127.0.0.1:59092'),
};

/** Every variable the service reads; its manifest lists them from here. */
export const configSchema = z.object({
  ...httpServerEnv(DEFAULT_PORT),
  ...setupEnv,
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).default(10),
  /** Events written by one batch of concurrent requests at most (a larger request goes alone). */
  RECORDING_MAX_BATCH_EVENTS: z.coerce.number().int().min(1).max(10_000).default(500),
  /** How long a request may wait for others to share its batch while batches are in flight. */
  RECORDING_MAX_WAIT_MS: z.coerce.number().min(0).max(100).default(1),
  ...operatorAndServiceTokensEnv,
  ...publicApiEnv,
  /** The contacts service, which resolves every request's identities in one call. */
  SERVICE_URL_CONTACTS: url('http://127.0.0.1:18082'),
  /** Rate budgets, the subscription mirror and the dedup fast path. */
  ...redisEnv,
});

export type EventsConfig = Readonly<z.output<typeof configSchema>>;

export function loadEventsConfig(
  env: Record<string, string | undefined> = process.env,
): EventsConfig {
  return loadConfig(configSchema, env);
}

export function loadMigrationConfig(env: Record<string, string | undefined> = process.env) {
  return loadConfig(z.object(setupEnv), env);
}

/** Every variable the relay process reads. */
export const relayConfigSchema = z.object({
  ...httpServerEnv(DEFAULT_RELAY_PORT),
  ...setupEnv,
});

export type RelayConfig = Readonly<z.output<typeof relayConfigSchema>>;

/** The outbox relay runs as its own process (its own Deployment): it needs no secrets. */
export function loadRelayConfig(
  env: Record<string, string | undefined> = process.env,
): RelayConfig {
  return loadConfig(relayConfigSchema, env);
}
