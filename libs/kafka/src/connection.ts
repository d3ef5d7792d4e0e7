// How a process reaches Kafka: its brokers, and TLS and SASL as managed offerings require them.
import type { ConnectionOptions } from 'node:tls';
import { caFile, ConfigError, flag, list, readCaFile, z } from '@herald/config';

/** The SASL mechanisms Herald supports, as KAFKA_SASL_MECHANISM names them. */
export const KAFKA_SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;
export type KafkaSaslMechanism = (typeof KAFKA_SASL_MECHANISMS)[number];

/** A SASL user, one mechanism at a time. */
export type KafkaSasl = {
  [M in KafkaSaslMechanism]: { mechanism: M; username: string; password: string };
}[KafkaSaslMechanism];

/**
 * The variables of every process that uses Kafka (producers, consumers, the migrations' topic
 * setup): plain by default, as the local stack serves it.
 */
export const kafkaEnv = {
  KAFKA_BROKERS: list('127.0.0.1:59092').describe('comma-separated bootstrap brokers `host:port`'),
  KAFKA_TLS: flag().describe(
    'TLS to the brokers, an SSL or SASL_SSL listener (`true` or `false`); off when unset',
  ),
  KAFKA_CA_FILE: caFile().describe(
    "the CA bundle (PEM) the brokers' certificates must chain to; unset: Node's trusted CAs",
  ),
  KAFKA_SASL_MECHANISM: z
    .enum(KAFKA_SASL_MECHANISMS)
    .optional()
    .describe(
      'a SASL mechanism: `plain` (TLS only), `scram-sha-256` or `scram-sha-512` ([details](docs/deployment.md#managed-postgresql-redis-and-kafka-tls-and-sasl)); unset: no SASL',
    ),
  KAFKA_SASL_USERNAME: z.string().min(1).optional().describe('the SASL user'),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional().describe("the SASL user's password, a secret"),
};

export interface KafkaConfig {
  KAFKA_BROKERS: string[];
  KAFKA_TLS?: boolean | undefined;
  KAFKA_CA_FILE?: string | undefined;
  KAFKA_SASL_MECHANISM?: KafkaSaslMechanism | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
}

/** What createKafka takes besides its client id and logger. */
export interface KafkaConnection {
  brokers: string[];
  ssl?: ConnectionOptions;
  sasl?: KafkaSasl;
}

/**
 * The connection of a process from its variables, checked together: a ConfigError names what
 * does not fit, never quoting the password. TLS always verifies the brokers' certificates (chain
 * and name).
 */
export function kafkaConnection(config: KafkaConfig): KafkaConnection {
  const problems: string[] = [];
  const tls = config.KAFKA_TLS === true;
  if (config.KAFKA_CA_FILE !== undefined && !tls) {
    problems.push('KAFKA_CA_FILE is set but TLS is off: set KAFKA_TLS=true');
  }
  const mechanism = config.KAFKA_SASL_MECHANISM;
  const { KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = config;
  if (mechanism === undefined && (username ?? password) !== undefined) {
    problems.push('KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD are set without KAFKA_SASL_MECHANISM');
  }
  const named = { KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password };
  for (const [name, value] of Object.entries(named)) {
    if (mechanism !== undefined && value === undefined) {
      problems.push(`KAFKA_SASL_MECHANISM=${mechanism} needs ${name}`);
    }
  }
  if (mechanism === 'plain' && !tls) {
    problems.push(
      'KAFKA_SASL_MECHANISM=plain sends the password as it is: only over TLS (KAFKA_TLS=true)',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const ca = config.KAFKA_CA_FILE === undefined ? undefined : readCaFile(config.KAFKA_CA_FILE);
  return {
    brokers: config.KAFKA_BROKERS,
    ...(tls ? { ssl: { rejectUnauthorized: true, ...(ca ? { ca } : {}) } } : {}),
    ...(mechanism && username && password ? { sasl: { mechanism, username, password } } : {}),
  };
}
