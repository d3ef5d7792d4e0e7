import { errors } from '@herald/errors';
import { parseOrThrow, uuidParam, type RouteHandlers } from '@herald/http';
import { createApiKey, revokeApiKey, type ApiKeyDeps } from '../domain/api-keys.js';
import { isClientId } from '../domain/credentials.js';
import {
  setTenantEventRetention,
  tenantEventRetention,
  type EventRetentionDeps,
} from '../domain/event-retention.js';
import { createTenant } from '../domain/tenants.js';
import {
  createApiKeyBody,
  createTenantBody,
  setEventRetentionBody,
  type ApiKeyResponse,
  type EventRetentionResponse,
  type TenantResponse,
} from '../schemas.js';
import type { manifest } from '../manifest.js';

/** A malformed tenant id names no tenant: 404, as for an unknown one. */
const tenantIdOf = (raw: string | undefined) => uuidParam(raw, 'no such tenant');

/** Likewise a malformed ClientID (U+0000 included) names no key, and is never looked up. */
function clientIdOf(raw: string): string {
  if (!isClientId(raw)) throw errors.notFound('no such API key in this tenant');
  return raw;
}

/** Operator API (docs/api-reference.md#the-operator-api): tenants and API keys. */
export function adminHandlers(
  deps: ApiKeyDeps,
): Pick<RouteHandlers<typeof manifest.routes>, 'createTenant' | 'createApiKey' | 'revokeApiKey'> {
  return {
    createTenant: async (req, res) => {
      const tenant = await createTenant(deps, parseOrThrow(createTenantBody, req.body));
      const body: TenantResponse = {
        id: tenant.id,
        name: tenant.name,
        createdAt: tenant.createdAt.toISOString(),
      };
      res.status(201).json(body);
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
