// Requests the local stack accepted and answers it gave, for the OpenAPI document's examples
// (libs/api-reference checks each against its schema). The keys were revoked once the answers
// were taken, and the token has expired.

export const tenantWriteExample = { name: 'Acme Shop' };

export const tenantExample = {
  id: '80e5b440-6883-43d9-b47a-ab9291d1fa23',
  name: 'Acme Shop',
  createdAt: '2026-11-24T02:06:26.748Z',
};

export const tenantListExample = {
  tenants: [tenantExample],
  nextCursor: 'MTc5NTkwOTE4Njc0ODAwMC44MGU1YjQ0MC02ODgzLTQzZDktYjQ3YS1hYjkyOTFkMWZhMjM',
};

export const tenantListInvalidExample = {
  code: 'validation_error',
  message: 'query.limit: Too big: expected number to be <=100',
};

export const tenantInvalidExample = {
  code: 'validation_error',
  message: 'body.name: Too small: expected string to have >=1 characters',
};

export const apiKeyWriteExample = {
  name: 'backend',
  kind: 'secret',
  scopes: ['events:write', 'contacts:write', 'contacts:read', 'contacts:export', 'contacts:erase'],
};

export const apiKeyExample = {
  clientId: 'ck_1sIRDL5bzKI4Twt3p3XLU2',
  secret: 'sk_uUJS7qYI7tDykpaQSGW5jaXedRwswuJ3TKfRkdxTEVx',
  kind: 'secret',
  scopes: ['events:write', 'contacts:write', 'contacts:read', 'contacts:export', 'contacts:erase'],
  createdAt: '2026-11-24T02:06:26.847Z',
};

export const apiKeyListExample = {
  apiKeys: [
    {
      clientId: 'pk_4fQ2mZ8RkV1xW7nB3cT6yH',
      kind: 'publishable',
      name: 'shop pages',
      scopes: ['events:write'],
      identifierLookup: false,
      allowedOrigins: ['https://shop.example.com'],
      createdAt: '2026-11-25T09:12:03.114Z',
      revokedAt: null,
    },
    {
      clientId: apiKeyExample.clientId,
      kind: 'secret',
      name: 'backend',
      scopes: apiKeyExample.scopes,
      createdAt: apiKeyExample.createdAt,
      revokedAt: '2026-11-26T17:40:51.002Z',
    },
  ],
};

/** `{"kind": "public"}` */
export const apiKeyInvalidExample = {
  code: 'validation_error',
  message: 'body.kind: Invalid option: expected one of "secret"|"publishable"',
};

export const noSuchApiKeyExample = { code: 'not_found', message: 'no such API key in this tenant' };

/** `DELETE /admin/v1/tenants/{id}?confirm={id}`: accepted, under way. */
export const tenantDeletionExample = {
  id: '80e5b440-6883-43d9-b47a-ab9291d1fa23',
  status: 'deleting',
  requestedAt: '2026-11-22T01:24:46.123Z',
};

/** The same without `confirm`. */
export const tenantDeletionMismatchExample = {
  code: 'conflict',
  message:
    'query.confirm: names another tenant than 80e5b440-6883-43d9-b47a-ab9291d1fa23; to delete this tenant and everything it holds, send its id again as confirm=80e5b440-6883-43d9-b47a-ab9291d1fa23; nothing was deleted',
};

export const tenantDeletionUnconfirmedExample = {
  code: 'validation_error',
  message:
    'query.confirm: to delete this tenant and everything it holds, send its id again as confirm=80e5b440-6883-43d9-b47a-ab9291d1fa23; nothing was deleted',
};

export const tokenExample = {
  accessToken:
    'eyJhbGciOiJFUzI1NiIsImtpZCI6IlRURmM4RmppQk5ZbSIsInR5cCI6ImF0K2p3dCJ9.eyJ0aWQiOiI4MGU1YjQ0MC02ODgzLTQzZDktYjQ3YS1hYjkyOTFkMWZhMjMiLCJjbGllbnRfaWQiOiJja18xc0lSREw1YnpLSTRUd3QzcDNYTFUyIiwic2NvcGUiOiJldmVudHM6d3JpdGUgY29udGFjdHM6d3JpdGUgY29udGFjdHM6cmVhZCBjb250YWN0czpleHBvcnQgY29udGFjdHM6ZXJhc2UiLCJpc3MiOiJoZXJhbGQtYXV0aCIsImF1ZCI6ImhlcmFsZC1hcGkiLCJzdWIiOiJja18xc0lSREw1YnpLSTRUd3QzcDNYTFUyIiwianRpIjoiNzU3OTI3Y2QtOWFkYy00NzI5LTkyYzctMmQxMDZmOGYzNzYyIiwiaWF0IjoxNzk1NDg1OTg2LCJleHAiOjE3OTU0ODY4ODZ9.5CsnkAIzuEUFbAVth0-VXZnGjSddIz8c2Qq7RFXjs3MVWtQUCMJreTbnNGLZiTWBSbsXLm0w5LslTH08ZjcSgA',
  tokenType: 'Bearer',
  expiresIn: 900,
};

/** A wrong secret. */
export const invalidClientExample = {
  code: 'invalid_client',
  message: 'client authentication failed',
};

/** The 11th exchange after ten failures for one ClientID (with `Retry-After: 6`). */
export const exchangeRefusedExample = {
  code: 'rate_limited',
  message: 'too many failed token exchanges; retry after the number of seconds in Retry-After',
};

export const eventRetentionWriteExample = { days: 90 };

export const eventRetentionExample = { days: 90, source: 'tenant', defaultDays: 730 };

/** `{"days": 0}` */
export const eventRetentionInvalidExample = {
  code: 'validation_error',
  message: 'body.days: Too small: expected number to be >=1',
};
