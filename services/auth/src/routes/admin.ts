import { errors } from '@herald/errors';
import { parseOrThrow, uuidParam, type RouteHandlers } from '@herald/http';
import { createApiKey, revokeApiKey, tenantApiKeys, type ApiKeyDeps } from '../domain/api-keys.js';
import { isClientId } from '../domain/credentials.js';
import {
  setTenantEventRetention,
  tenantEventRetention,
  type EventRetentionDeps,
} from '../domain/event-retention.js';
import { createTenant, listTenants, tenantById } from '../domain/tenants.js';
import {
  createApiKeyBody,
  createTenantBody,
  listTenantsQuery,
  setEventRetentionBody,
  type ApiKeyListResponse,
  type ApiKeyResponse,
  type EventRetentionResponse,
  type TenantListResponse,
  type TenantResponse,
} from '../schemas.js';
import type { Tenant } from '../data/tenants-repository.js';
import type { manifest } from '../manifest.js';

/** A malformed tenant id names no tenant: 404, as for an unknown one. */
const tenantIdOf = (raw: string | undefined) => uuidParam(raw, 'no such tenant');

/** Likewise a malformed ClientID (U+0000 included) names no key, and is never looked up. */
function clientIdOf(raw: string): string {
  if (!isClientId(raw)) throw errors.notFound('no such API key in this tenant');
  return raw;
}

const tenantBody = (tenant: Tenant): TenantResponse => ({
  id: tenant.id,
  name: tenant.name,
  createdAt: tenant.createdAt.toISOString(),
});

/** Operator API (docs/api-reference.md#the-operator-api): tenants and API keys. */
export function adminHandlers(
  deps: ApiKeyDeps,
): Pick<
  RouteHandlers<typeof manifest.routes>,
  'createTenant' | 'listTenants' | 'getTenant' | 'createApiKey' | 'listApiKeys' | 'revokeApiKey'
> {
  return {
    createTenant: async (req, res) => {
      const tenant = await createTenant(deps, parseOrThrow(createTenantBody, req.body));
      res.status(201).json(tenantBody(tenant));
    },
    listTenants: async (req, res) => {
      const page = await listTenants(deps, parseOrThrow(listTenantsQuery, req.query, 'query'));
      const body: TenantListResponse = {
        tenants: page.tenants.map(tenantBody),
        nextCursor: page.nextCursor,
      };
      res.json(body);
    },
    getTenant: async (req, res) => {
      res.json(tenantBody(await tenantById(deps, tenantIdOf(req.params.tenantId))));
    },
    listApiKeys: async (req, res) => {
      const keys = await tenantApiKeys(deps, tenantIdOf(req.params.tenantId));
      const body: ApiKeyListResponse = {
        apiKeys: keys.map((key) => ({
          ...key,
          createdAt: key.createdAt.toISOString(),
          revokedAt: key.revokedAt?.toISOString() ?? null,
        })),
      };
      res.json(body);
    },
    createApiKey: async (req, res) => {
      const tenantId = tenantIdOf(req.params.tenantId);
      const key = await createApiKey(deps, {
        tenantId,
        ...parseOrThrow(createApiKeyBody, req.body),
      });
      const body: ApiKeyResponse = { ...key, createdAt: key.createdAt.toISOString() };
      res.status(201).json(body);
    },
    revokeApiKey: async (req, res) => {
      await revokeApiKey(deps, tenantIdOf(req.params.tenantId), clientIdOf(req.params.clientId));
      res.status(204).end();
    },
  };
}

/** Operator API: how long a Tenant's Events are kept. */
export function eventRetentionHandlers(
  deps: EventRetentionDeps,
): Pick<RouteHandlers<typeof manifest.routes>, 'tenantEventRetention' | 'setTenantEventRetention'> {
  return {
    tenantEventRetention: async (req, res) => {
      const body: EventRetentionResponse = await tenantEventRetention(
        deps,
        tenantIdOf(req.params.tenantId),
      );
      res.json(body);
    },
    setTenantEventRetention: async (req, res) => {
      // A malformed id names no Tenant: 404 whatever the body, as for the API key routes.
      const tenantId = tenantIdOf(req.params.tenantId);
      const { days } = parseOrThrow(setEventRetentionBody, req.body);
      const body: EventRetentionResponse = await setTenantEventRetention(deps, tenantId, days);
      res.json(body);
    },
  };
}
