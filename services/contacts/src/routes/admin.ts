import type { TenantDirectory } from '@herald/auth';
import type { Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { parseOrThrow, type RouteHandlers } from '@herald/http';
import { contactsWithIdentity, isUuid } from '../domain/contacts.js';
import { createOrganization, organizationsPage } from '../domain/organizations.js';
import type { Organization } from '../data/organizations-repository.js';
import { presentContact } from '../domain/contact-snapshot.js';
import { contactSearchQuery, listOrganizationsQuery, organizationBody } from '../schemas.js';
import type { manifest } from '../manifest.js';

/** A malformed Tenant id names no Tenant: 404. */
export function tenantIdOf(raw: string): string {
  if (!isUuid(raw)) throw errors.notFound('no such tenant');
  return raw.toLowerCase();
}

const organizationBodyOf = (org: Organization) => ({
  externalId: org.externalId,
  name: org.name,
  createdAt: org.createdAt.toISOString(),
});

/** Operator API: organizations, and looking up one Contact. */
export function adminHandlers(deps: {
  pool: Pool;
  tenantExists: TenantDirectory;
}): Pick<
  RouteHandlers<typeof manifest.routes>,
  'createOrganization' | 'listOrganizations' | 'findContacts'
> {
  return {
    createOrganization: async (req, res) => {
      const org = await createOrganization(
        deps,
        tenantIdOf(req.params.tenantId),
        parseOrThrow(organizationBody, req.body),
      );
      res.status(201).json(organizationBodyOf(org));
    },
    listOrganizations: async (req, res) => {
      const tenantId = tenantIdOf(req.params.tenantId);
      const query = parseOrThrow(listOrganizationsQuery, req.query, 'query');
      const page = await organizationsPage(deps, tenantId, query);
      res.json({
        organizations: page.organizations.map(organizationBodyOf),
        nextCursor: page.nextCursor,
      });
    },
    findContacts: async (req, res) => {
      const tenantId = tenantIdOf(req.params.tenantId);
      const { identity } = parseOrThrow(contactSearchQuery, req.query, 'query');
      if (!(await deps.tenantExists(tenantId))) throw errors.notFound('no such tenant');
      const contacts = await contactsWithIdentity(deps.pool, tenantId, identity);
      res.json({ contacts: contacts.map(presentContact) });
    },
  };
}
