// redisOptionsFromConfig: TLS and an ACL user from the variables or the URLs, checked together
// at start; a refusal names the variables and never quotes a URL or a password.
import fs from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { refusalOf, usePki } from '@herald/jest-preset/throwaway';
import { ConfigError, loadConfig, z } from '@herald/config';
import { redisEnv, redisOptionsFromConfig } from '../src/index.js';

const throwaway = usePki('redis-connection');

const options = (env: Record<string, string>) =>
  redisOptionsFromConfig(loadConfig(z.object(redisEnv), env));

/** The ConfigError's message, which must name the problem and never quote the password. */
const refusal = (env: Record<string, string>) =>
  refusalOf(() => options(env), { errorType: ConfigError, secret: 's3cret' });

describe('redisOptionsFromConfig', () => {
  it('when nothing is set, then the local node is reached plainly, without a user', () => {
    expect(options({})).toEqual({ url: 'redis://127.0.0.1:56379', clusterNodes: [] });
  });

  it('when the URL is rediss://, then TLS is on with Node’s trusted CAs', () => {
    expect(options({ REDIS_URL: 'rediss://cache.example.com:6380' }).tls).toBe(true);
  });

  it('when REDIS_TLS, a CA file and an ACL user are set, then all of them go to the client', () => {
    expect(
      options({
        REDIS_CLUSTER_NODES: 'redis://node-0:6379,redis://node-1:6379',
        REDIS_TLS: 'true',
        REDIS_CA_FILE: throwaway.pki.caFile,
        REDIS_USERNAME: 'herald',
        REDIS_PASSWORD: 's3cret',
      }),
    ).toMatchObject({
      clusterNodes: ['redis://node-0:6379', 'redis://node-1:6379'],
      tls: { ca: fs.readFileSync(throwaway.pki.caFile, 'utf8') },
      username: 'herald',
      password: 's3cret',
    });
  });

  it('when a CA file is set while TLS is off, then it is refused', () => {
    expect(refusal({ REDIS_CA_FILE: throwaway.pki.caFile })).toMatch(
      /REDIS_CA_FILE is set but TLS is off/,
    );
  });

  it('when REDIS_TLS is false but the URL is rediss://, then it is refused', () => {
    expect(refusal({ REDIS_TLS: 'false', REDIS_URL: 'rediss://cache:6380' })).toMatch(
      /REDIS_TLS is false, but REDIS_URL uses rediss:\/\//,
    );
  });

  it('when the Cluster seeds mix redis:// and rediss://, then it is refused', () => {
    expect(refusal({ REDIS_CLUSTER_NODES: 'rediss://a:6379,redis://b:6379' })).toMatch(
      /REDIS_CLUSTER_NODES: mixes redis:\/\/ and rediss:\/\//,
    );
  });

  it('when a user has no password, then it is refused', () => {
    expect(refusal({ REDIS_USERNAME: 'herald' })).toMatch(
      /REDIS_USERNAME is set without REDIS_PASSWORD/,
    );
  });

  it('when the URL carries credentials and the variables too, then it is refused without quoting either', () => {
    expect(
      refusal({ REDIS_URL: 'rediss://app:s3cret@cache:6380', REDIS_PASSWORD: 's3cret-too' }),
    ).toMatch(/REDIS_URL carries credentials and REDIS_USERNAME\/REDIS_PASSWORD are set/);
  });

  it('when the Cluster seeds carry different credentials, then it is refused', () => {
    expect(
      refusal({ REDIS_CLUSTER_NODES: 'redis://:s3cret-a@a:6379,redis://:s3cret-b@b:6379' }),
    ).toMatch(/the nodes carry different credentials/);
  });

  it('when a URL is not a Redis one, then it is refused', () => {
    expect(refusal({ REDIS_URL: 'https://cache:6379' })).toMatch(
      /REDIS_URL: a Redis URL starts with redis:\/\/ or rediss:\/\//,
    );
  });
});
