// Requests the local stack accepted and answers it gave, for the OpenAPI document's examples
// (libs/api-reference checks each against its schema). The key and token belong to a Tenant of
// a local stack that no longer exists.

export const tenantWriteExample = { name: 'Acme Shop' };

export const tenantExample = {
  id: '7a6f2714-e3e7-4d25-8b6f-44377ac8b3ee',
  name: 'Acme Shop',
  createdAt: '2026-11-23T09:42:26.251Z',
};

export const apiKeyWriteExample = {
  name: 'backend',
  kind: 'secret',
  scopes: ['events:write', 'contacts:write', 'contacts:read', 'contacts:export', 'contacts:erase'],
};

export const apiKeyExample = {
  clientId: 'ck_1oh7NraYFevkkywtt5oQAr',
  secret: 'sk_TFr7VV1aUonWFt1kM0d3lu2gnaumsBMBzjSX9xM3CCX',
  kind: 'secret',
  scopes: ['events:write', 'contacts:write', 'contacts:read', 'contacts:export', 'contacts:erase'],
  createdAt: '2026-11-23T09:42:26.616Z',
};

export const tokenExample = {
  accessToken:
    'eyJhbGciOiJFUzI1NiIsImtpZCI6ImhPUVlqdkZsU1Q2aCIsInR5cCI6ImF0K2p3dCJ9.eyJ0aWQiOiI3YTZmMjcxNC1lM2U3LTRkMjUtOGI2Zi00NDM3N2FjOGIzZWUiLCJjbGllbnRfaWQiOiJja18xb2g3TnJhWUZldmtreXd0dDVvUUFyIiwic2NvcGUiOiJldmVudHM6d3JpdGUgY29udGFjdHM6d3JpdGUgY29udGFjdHM6cmVhZCBjb250YWN0czpleHBvcnQgY29udGFjdHM6ZXJhc2UiLCJpc3MiOiJoZXJhbGQtYXV0aCIsImF1ZCI6ImhlcmFsZC1hcGkiLCJzdWIiOiJja18xb2g3TnJhWUZldmtreXd0dDVvUUFyIiwianRpIjoiYzA1Zjc0ODctYmMxMy00MjY2LTljMjktODQ0NWFhYjE3NzhjIiwiaWF0IjoxNzk1NDI2OTQ3LCJleHAiOjE3OTU0Mjc4NDd9.n_6Ur6V-gowvO6esCWKpCrjy1HNVxqm-dHpLJC8Hz_sN8AIQvNURNWgKJ2YESVa7_bAS2DpgsU1lWYjMxOdXJw',
  tokenType: 'Bearer',
  expiresIn: 900,
};
