// databaseConnection: TLS from the variables or the URL's libpq parameters, checked together at
// start, and never a message that quotes the URL (it holds the password).
import fs from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { refusalOf, usePki } from '@herald/jest-preset/throwaway';
import { ConfigError, loadConfig, z } from '@herald/config';
import { databaseConnection, databaseEnv } from '../../src/index.js';

const LOCAL = 'postgres://herald@127.0.0.1:55432/herald_test';
const SECRET_URL = 'postgres://app:s3cret-pw@db.example.com:5432/herald';
const throwaway = usePki('db-connection');

const connection = (env: Record<string, string>) =>
  databaseConnection(loadConfig(z.object(databaseEnv(LOCAL)), env));

/** The ConfigError's message, which must name the problem and never quote the password. */
const refusal = (env: Record<string, string>) =>
  refusalOf(() => connection(env), { errorType: ConfigError, secret: 's3cret-pw' });

describe('databaseConnection', () => {
  it('when nothing is set, then the local default stays plain and the URL untouched', () => {
    expect(connection({})).toEqual({ connectionString: LOCAL, ssl: false });
  });

  it('when DATABASE_SSL_MODE=verify-full with a CA, then the chain and the name are checked', () => {
    const { connectionString, ssl } = connection({
      DATABASE_URL: SECRET_URL,
      DATABASE_SSL_MODE: 'verify-full',
      DATABASE_CA_FILE: throwaway.pki.caFile,
    });
    expect(connectionString).toBe(SECRET_URL);
    expect(ssl).toEqual({
      rejectUnauthorized: true,
      ca: fs.readFileSync(throwaway.pki.caFile, 'utf8'),
    });
  });

  it('when the URL says sslmode=verify-full and sslrootcert, then they serve and leave the URL (node-postgres would replace `ssl` with them)', () => {
    const { connectionString, ssl } = connection({
      DATABASE_URL: `${SECRET_URL}?sslmode=verify-full&sslrootcert=${encodeURIComponent(throwaway.pki.caFile)}&connect_timeout=5`,
    });
    expect(connectionString).toBe(`${SECRET_URL}?connect_timeout=5`);
    expect(ssl).toMatchObject({
      rejectUnauthorized: true,
      ca: expect.stringContaining('BEGIN CERTIFICATE'),
    });
  });

  it('when sslmode=require, then it is read as verify-full: still verified, with Node’s CAs', () => {
    const { ssl } = connection({ DATABASE_URL: `${SECRET_URL}?sslmode=require` });
    expect(ssl).toEqual({ rejectUnauthorized: true });
  });

  it('when sslrootcert=system, then Node’s trusted CAs verify', () => {
    const { ssl } = connection({
      DATABASE_URL: `${SECRET_URL}?sslmode=verify-full&sslrootcert=system`,
    });
    expect(ssl).toEqual({ rejectUnauthorized: true });
  });

  it('when verify-ca with a CA, then the chain is checked and the name is not', () => {
    const { ssl } = connection({
      DATABASE_URL: SECRET_URL,
      DATABASE_SSL_MODE: 'verify-ca',
      DATABASE_CA_FILE: throwaway.pki.caFile,
    });
    expect(ssl).toMatchObject({ rejectUnauthorized: true });
    expect((ssl as { checkServerIdentity: () => unknown }).checkServerIdentity()).toBeUndefined();
  });

  it('when verify-ca has no CA file, then it is refused: a public CA would let anyone pass', () => {
    expect(refusal({ DATABASE_URL: SECRET_URL, DATABASE_SSL_MODE: 'verify-ca' })).toMatch(
      /verify-ca needs DATABASE_CA_FILE/,
    );
  });

  it('when a CA is set while TLS is off, then it is refused', () => {
    expect(refusal({ DATABASE_URL: SECRET_URL, DATABASE_CA_FILE: throwaway.pki.caFile })).toMatch(
      /TLS is off/,
    );
  });

  it('when the variable and the URL disagree, then it is refused naming both', () => {
    expect(
      refusal({ DATABASE_URL: `${SECRET_URL}?sslmode=disable`, DATABASE_SSL_MODE: 'verify-full' }),
    ).toMatch(
      /DATABASE_SSL_MODE \(verify-full\) and the sslmode of DATABASE_URL \(disable\) differ/,
    );
  });

  it.each(['prefer', 'allow', 'no-verify'])(
    'when sslmode=%s (plain or unverified as a fallback), then it is refused',
    (mode) => {
      expect(refusal({ DATABASE_URL: `${SECRET_URL}?sslmode=${mode}` })).toMatch(
        new RegExp(`sslmode=${mode} is not supported`),
      );
    },
  );

  it('when the URL carries a client certificate, then it is refused', () => {
    expect(refusal({ DATABASE_URL: `${SECRET_URL}?sslcert=/tmp/c.crt&sslkey=/tmp/c.key` })).toMatch(
      /sslcert parameter is not supported/,
    );
  });

  it('when the URL’s sslrootcert cannot be read, then it is refused at start', () => {
    expect(
      refusal({
        DATABASE_URL: `${SECRET_URL}?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem`,
      }),
    ).toMatch(/the sslrootcert of DATABASE_URL: cannot read \/nonexistent\/ca\.pem \(ENOENT\)/);
  });

  it('when DATABASE_SSL_MODE is not a mode, then loading the configuration fails', () => {
    expect(() => connection({ DATABASE_SSL_MODE: 'on' })).toThrow(/DATABASE_SSL_MODE/);
  });
});
