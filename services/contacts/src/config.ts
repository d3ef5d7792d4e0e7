import { operatorAndServiceTokensEnv } from '@herald/auth';
import { httpServerEnv, list, loadConfig, url, urlList, z } from '@herald/config';
import { publicApiEnv } from '@herald/policy';
import { redisEnv } from '@herald/redis';

export const DEFAULT_PORT = 18082;

/** What the migration command needs too. */
const setupEnv = {
  DATABASE_URL: url('postgres://herald@127.0.0.1:55432/herald_contacts'),
  KAFKA_BROKERS: list('127.0.0.1:59092'),
};

/** Every variable the service reads; its manifest lists them from here. */
export const configSchema = z.object({
  ...httpServerEnv(DEFAULT_PORT),
  ...setupEnv,
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).default(10),
  ...operatorAndServiceTokensEnv,
  ...publicApiEnv,
  /** Rate budgets and the subscription mirror. */
  ...redisEnv,
  /**
   * Services that hold data about Contacts (the events service): the export streams their
   * lines after the Contact's, and an erasure erases there first. Comma-separated base URLs.
   * Required: without them an erasure would answer 204 and leave the Contact's Events behind.
   */
  CONTACT_DATA_SERVICES: urlList().refine(
    (urls) => urls.length > 0,
    'must list the base URLs of the services holding data about Contacts (the events service); without them an erasure would leave their data behind',
  ),
});

export type ContactsConfig = Readonly<z.output<typeof configSchema>>;

export function loadContactsConfig(
  env: Record<string, string | undefined> = process.env,
): ContactsConfig {
  return loadConfig(configSchema, env);
}

export function loadMigrationConfig(env: Record<string, string | undefined> = process.env) {
  return loadConfig(z.object(setupEnv), env);
}
