import { describe, expect, it } from '@jest/globals';
import { ConfigError, httpServerEnv, list, loadConfig, secret, url, z } from '../../src/index.js';

const schema = z.object({
  ...httpServerEnv(18081),
  DATABASE_URL: url('postgres://herald@127.0.0.1:55432/herald_auth'),
  KAFKA_BROKERS: list('127.0.0.1:59092'),
  ADMIN_TOKEN: secret(),
});

describe('loadConfig', () => {
  it('when only secrets are set, then the safe local defaults fill the rest', () => {
    const config = loadConfig(schema, { ADMIN_TOKEN: 'a'.repeat(32) });
    expect(config).toEqual({
      HOST: '127.0.0.1',
      PORT: 18081,
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: 10_000,
      DATABASE_URL: 'postgres://herald@127.0.0.1:55432/herald_auth',
      KAFKA_BROKERS: ['127.0.0.1:59092'],
      ADMIN_TOKEN: 'a'.repeat(32),
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('when a secret is missing, then the error names the variable and shows no value', () => {
    expect(() => loadConfig(schema, {})).toThrow(ConfigError);
    expect(() => loadConfig(schema, {})).toThrow(/ADMIN_TOKEN: required secret is missing/);
  });

  it('when a variable is malformed, then the error names it without echoing the value', () => {
    let error: unknown;
    try {
      loadConfig(schema, { ADMIN_TOKEN: 'short-but-secret', PORT: 'eighty', DATABASE_URL: 'x' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues;
    expect(issues.some((i) => i.startsWith('PORT:'))).toBe(true);
    expect(issues.some((i) => i.startsWith('DATABASE_URL:'))).toBe(true);
    expect((error as Error).message).not.toContain('short-but-secret');
  });

  it('when a variable is an empty string, then it counts as unset', () => {
    const config = loadConfig(schema, {
      ADMIN_TOKEN: 'b'.repeat(16),
      PORT: '',
      KAFKA_BROKERS: 'a:1, b:2',
    });
    expect(config.PORT).toBe(18081);
    expect(config.KAFKA_BROKERS).toEqual(['a:1', 'b:2']);
  });

  it('when variables are unknown to the schema, then they are not copied', () => {
    const config = loadConfig(schema, { ADMIN_TOKEN: 'c'.repeat(16), UNRELATED: 'x' });
    expect(config).not.toHaveProperty('UNRELATED');
  });
});

describe('METRICS_PORT', () => {
  const secrets = { ADMIN_TOKEN: 'a'.repeat(32) };

  it('when it is unset, then there is none (no metrics endpoint); when set, then it is the port', () => {
    expect(loadConfig(schema, secrets).METRICS_PORT).toBeUndefined();
    expect(loadConfig(schema, { ...secrets, METRICS_PORT: '' }).METRICS_PORT).toBeUndefined();
    expect(loadConfig(schema, { ...secrets, METRICS_PORT: '9464' }).METRICS_PORT).toBe(9464);
  });

  it.each(['0', '70000', 'metrics', '94.5'])(
    'when it is %s, then the service refuses to start, naming it',
    (value) => {
      expect(() => loadConfig(schema, { ...secrets, METRICS_PORT: value })).toThrow(
        /METRICS_PORT: /,
      );
    },
  );
});
