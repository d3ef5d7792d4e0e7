import { describe, expect, it } from '@jest/globals';
import {
  MAX_IDENTITY_QUERIES,
  resolveIdentitiesAnswer,
  resolveIdentitiesRequest,
} from '../../src/index.js';

const TENANT = '6f1f1b8e-4f3a-4c57-9d55-0d3f1f2b8a10';

describe('the identity resolution contract', () => {
  it('when a request names identities of every kind, then it parses as sent', () => {
    const request = {
      tenantId: TENANT,
      items: [
        { contactId: 'c1' },
        { contactExternalId: 'ext-1', organizationExternalId: 'org-1' },
        { contactEmail: 'a@example.com' },
        {},
      ],
    };
    expect(resolveIdentitiesRequest.parse(request)).toEqual(request);
  });

  it('when a request has no uuid tenant or too many items, then it is refused', () => {
    expect(resolveIdentitiesRequest.safeParse({ tenantId: 'x', items: [] }).success).toBe(false);
    const items = Array.from({ length: MAX_IDENTITY_QUERIES + 1 }, () => ({}));
    expect(resolveIdentitiesRequest.safeParse({ tenantId: TENANT, items }).success).toBe(false);
  });

  it('when an answer is read, then each item holds a contact id or null and an existence or null', () => {
    const answer = {
      items: [
        { contactId: 'c1', organizationExists: null },
        { contactId: null, organizationExists: false },
      ],
    };
    expect(resolveIdentitiesAnswer.parse(answer)).toEqual(answer);
    expect(resolveIdentitiesAnswer.safeParse({ items: [{ contactId: 1 }] }).success).toBe(false);
  });
});
