// kafkaConnection: TLS and a SASL user from the variables, checked together at start; a refusal
// names the variables and never quotes the password.
import fs from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { refusalOf, usePki } from '@herald/jest-preset/throwaway';
import { ConfigError, loadConfig, z } from '@herald/config';
import { kafkaConnection, kafkaEnv } from '../../src/index.js';

const throwaway = usePki('kafka-connection');

const connection = (env: Record<string, string>) =>
  kafkaConnection(loadConfig(z.object(kafkaEnv), env));

/** The ConfigError's message, which must name the problem and never quote the password. */
const refusal = (env: Record<string, string>) =>
  refusalOf(() => connection(env), { errorType: ConfigError, secret: 's3cret' });

describe('kafkaConnection', () => {
  it('when nothing is set, then the local broker is reached plainly, without SASL', () => {
    expect(connection({})).toEqual({ brokers: ['127.0.0.1:59092'] });
  });

  it('when TLS, a CA and SCRAM-SHA-512 are set, then the client verifies and authenticates', () => {
    expect(
      connection({
        KAFKA_BROKERS: 'b-1.kafka.example.com:9096,b-2.kafka.example.com:9096',
        KAFKA_TLS: 'true',
        KAFKA_CA_FILE: throwaway.pki.caFile,
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'herald',
        KAFKA_SASL_PASSWORD: 's3cret',
      }),
    ).toEqual({
      brokers: ['b-1.kafka.example.com:9096', 'b-2.kafka.example.com:9096'],
      ssl: { rejectUnauthorized: true, ca: fs.readFileSync(throwaway.pki.caFile, 'utf8') },
      sasl: { mechanism: 'scram-sha-512', username: 'herald', password: 's3cret' },
    });
  });

  it('when TLS is on without a CA file, then Node’s trusted CAs verify', () => {
    expect(connection({ KAFKA_TLS: 'true' }).ssl).toEqual({ rejectUnauthorized: true });
  });

  it('when SASL/PLAIN is asked for without TLS, then it is refused: the password would cross in clear', () => {
    expect(
      refusal({
        KAFKA_SASL_MECHANISM: 'plain',
        KAFKA_SASL_USERNAME: 'herald',
        KAFKA_SASL_PASSWORD: 's3cret',
      }),
    ).toMatch(/KAFKA_SASL_MECHANISM=plain sends the password as it is: only over TLS/);
  });

  it('when SCRAM is asked for without TLS, then it is allowed (SCRAM never sends the password)', () => {
    expect(
      connection({
        KAFKA_SASL_MECHANISM: 'scram-sha-256',
        KAFKA_SASL_USERNAME: 'herald',
        KAFKA_SASL_PASSWORD: 's3cret',
      }).sasl,
    ).toEqual({ mechanism: 'scram-sha-256', username: 'herald', password: 's3cret' });
  });

  it('when a mechanism lacks its user or password, then each missing one is named', () => {
    const message = refusal({ KAFKA_TLS: 'true', KAFKA_SASL_MECHANISM: 'scram-sha-512' });
    expect(message).toMatch(/needs KAFKA_SASL_USERNAME/);
    expect(message).toMatch(/needs KAFKA_SASL_PASSWORD/);
  });

  it('when a user is set without a mechanism, then it is refused', () => {
    expect(refusal({ KAFKA_SASL_USERNAME: 'herald', KAFKA_SASL_PASSWORD: 's3cret' })).toMatch(
      /without KAFKA_SASL_MECHANISM/,
    );
  });

  it('when a CA file is set while TLS is off, then it is refused', () => {
    expect(refusal({ KAFKA_CA_FILE: throwaway.pki.caFile })).toMatch(
      /KAFKA_CA_FILE is set but TLS is off/,
    );
  });

  it('when the mechanism is unknown, then loading the configuration fails', () => {
    expect(() => connection({ KAFKA_SASL_MECHANISM: 'gssapi' })).toThrow(/KAFKA_SASL_MECHANISM/);
  });
});
