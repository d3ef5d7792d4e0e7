// The CA bundle variables: a file that cannot serve stops the process when its configuration
// loads, with the reason and without the file's content.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { createTestPki, tempDir, type TestPki } from '@herald/jest-preset/throwaway';
import { caFile, ConfigError, flag, loadConfig, readCaFile, z } from '../../src/index.js';

let dir: string;
let pki: TestPki;
const schema = z.object({ CA_FILE: caFile(), SWITCH: flag() });

beforeAll(async () => {
  dir = tempDir('config-ca');
  pki = await createTestPki(dir);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('caFile', () => {
  it('when the file holds certificates, then the path is kept and the bundle reads back', () => {
    const bundle = path.join(dir, 'bundle.pem');
    fs.writeFileSync(
      bundle,
      fs.readFileSync(pki.caFile, 'utf8') + fs.readFileSync(pki.otherCaFile, 'utf8'),
    );
    expect(loadConfig(schema, { CA_FILE: bundle }).CA_FILE).toBe(bundle);
    expect(readCaFile(bundle).match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
  });

  it('when unset, then there is no CA file', () => {
    expect(loadConfig(schema, {}).CA_FILE).toBeUndefined();
  });

  it('when the file is missing, then the start fails naming the variable and the reason', () => {
    const missing = path.join(dir, 'missing.pem');
    expect(() => loadConfig(schema, { CA_FILE: missing })).toThrow(ConfigError);
    expect(() => loadConfig(schema, { CA_FILE: missing })).toThrow(
      /CA_FILE: cannot read .*missing\.pem \(ENOENT\)/,
    );
  });

  it('when the file is a private key, then it is refused without quoting it', () => {
    let message = '';
    try {
      loadConfig(schema, { CA_FILE: pki.serverKey });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/holds no PEM certificate/);
    expect(message).not.toContain('PRIVATE KEY');
  });

  it('when a certificate does not parse, then it is refused', () => {
    const broken = path.join(dir, 'broken.pem');
    fs.writeFileSync(
      broken,
      '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n',
    );
    expect(() => loadConfig(schema, { CA_FILE: broken })).toThrow(
      /certificate 1 of .* does not parse/,
    );
  });
});

describe('flag', () => {
  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['off', false],
  ])('when set to %s, then it reads %s', (value, expected) => {
    expect(loadConfig(schema, { SWITCH: value }).SWITCH).toBe(expected);
  });

  it('when unset, then it stays undefined; anything else is refused', () => {
    expect(loadConfig(schema, {}).SWITCH).toBeUndefined();
    expect(() => loadConfig(schema, { SWITCH: 'maybe' })).toThrow(/SWITCH: must be true or false/);
  });
});
