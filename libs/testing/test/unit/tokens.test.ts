import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  basicAuthorization,
  createTestSigner,
  createTestTenants,
  createTestVerifier,
  signTestAccessToken,
} from '../../src/index.js';

describe('test token signer', () => {
  it('when a token is signed, then a verifier with the signer as its local key set accepts it', async () => {
    const signer = createTestSigner();
    const tenantId = randomUUID();
    const claims = await createTestVerifier(signer).verify(
      signTestAccessToken(signer, tenantId, ['contacts:read', 'events:write']),
    );
    expect(claims.tenantId).toBe(tenantId);
    expect([...claims.scopes].sort()).toEqual(['contacts:read', 'events:write']);
  });

  it('when a token is signed by another key, then the verifier rejects it', async () => {
    const token = signTestAccessToken(createTestSigner(), randomUUID());
    await expect(createTestVerifier(createTestSigner()).verify(token)).rejects.toThrow();
  });
});

describe('createTestTenants', () => {
  it('when a Tenant is made, then it exists (its id in any case) and its token is the signer’s, for that Tenant', async () => {
    const signer = createTestSigner();
    const tenants = createTestTenants(signer);
    const { tenantId, token } = tenants.newTenant();

    expect(await tenants.tenantExists(tenantId.toUpperCase())).toBe(true);
    expect(await tenants.tenantExists(randomUUID())).toBe(false);
    expect(tenants.tenants).toEqual(new Set([tenantId]));
    expect((await createTestVerifier(signer).verify(token)).tenantId).toBe(tenantId);
  });

  it('when a token is asked with scopes, then it carries those scopes only', async () => {
    const signer = createTestSigner();
    const token = createTestTenants(signer).tokenFor(randomUUID(), ['contacts:read']);
    expect([...(await createTestVerifier(signer).verify(token)).scopes]).toEqual(['contacts:read']);
  });
});

describe('basicAuthorization', () => {
  it('when a key is given, then it is the HTTP Basic header of client id and secret', () => {
    expect(basicAuthorization('ck_a', 'sk_b')).toBe(
      `Basic ${Buffer.from('ck_a:sk_b').toString('base64')}`,
    );
  });
});
