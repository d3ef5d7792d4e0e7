import type { Pool } from '@herald/db';
import { errors } from '@herald/errors';
import {
  selectEventRetentionsOtherThan,
  selectTenantEventRetention,
  updateTenantEventRetention,
} from '../data/event-retention-repository.js';

/**
 * How long a Tenant's Events may be kept, in days (docs/operations.md#how-long-an-event-is-kept):
 * at least a day, so a retention never races recording, the dedup window or publishing; at most
 * ten years, the longest bookkeeping obligation an installation is likely to keep Events for.
 * The default is two years of history for Journeys and reporting.
 */
export const EVENT_RETENTION_DAYS = { min: 1, max: 3650, default: 730 } as const;

export interface EventRetentionDeps {
  pool: Pool;
  /** EVENT_RETENTION_DAYS_DEFAULT: the retention of every Tenant without one of its own. */
  eventRetentionDefaultDays: number;
}

/** A Tenant's retention as the operator API answers it. */
export interface TenantEventRetention {
  days: number;
  /** `tenant`: set for this Tenant; `default`: the installation's default applies. */
  source: 'tenant' | 'default';
  defaultDays: number;
}

function effective(deps: EventRetentionDeps, own: number | null): TenantEventRetention {
  const defaultDays = deps.eventRetentionDefaultDays;
  return own === null
    ? { days: defaultDays, source: 'default', defaultDays }
    : { days: own, source: 'tenant', defaultDays };
}

/** The Tenant's retention; 404 when there is no such Tenant. */
export async function tenantEventRetention(
  deps: EventRetentionDeps,
  tenantId: string,
): Promise<TenantEventRetention> {
  const found = await selectTenantEventRetention(deps.pool, tenantId);
  if (!found) throw errors.notFound('no such tenant');
  return effective(deps, found.days);
}

/**
 * Sets the Tenant's own retention, or with `null` lets the default apply again (also after the
 * default changes); 404 when there is no such Tenant. The events service deletes what the new
 * period no longer covers at its next sweep.
 */
export async function setTenantEventRetention(
  deps: EventRetentionDeps,
  tenantId: string,
  days: number | null,
): Promise<TenantEventRetention> {
  if (!(await updateTenantEventRetention(deps.pool, tenantId, days))) {
    throw errors.notFound('no such tenant');
  }
  return effective(deps, days);
}

/**
 * What the events service needs to sweep every Tenant without listing them all: the default, and
 * the Tenants whose retention is another.
 */
export async function eventRetentionOverview(deps: EventRetentionDeps): Promise<{
  defaultDays: number;
  tenants: Array<{ tenantId: string; days: number }>;
}> {
  const defaultDays = deps.eventRetentionDefaultDays;
  return {
    defaultDays,
    tenants: await selectEventRetentionsOtherThan(deps.pool, defaultDays),
  };
}
