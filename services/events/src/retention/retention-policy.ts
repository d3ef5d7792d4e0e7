import type { AnswerOf, authRoutes } from '@herald/internal-api';

/**
 * Every Tenant's Event retention as the auth service answers it: the installation's default, and
 * the Tenants whose retention is another (docs/operations.md#how-long-an-event-is-kept).
 */
export type RetentionSettings = AnswerOf<(typeof authRoutes)['eventRetentionOverview']>;

/** Reads the retention settings (from the auth service in production). */
export type RetentionSource = () => Promise<RetentionSettings>;

export const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The longest retention of any Tenant, in days: nothing recorded more recently than that many days
 * ago may go for every Tenant, so whole partitions older than it can be dropped. Tenants at it are
 * left to those drops; the sweep cleans the others.
 */
export function longestRetentionDays(settings: RetentionSettings): number {
  return Math.max(settings.defaultDays, ...settings.tenants.map((t) => t.days));
}

/** One Tenant the sweep cleans, with the retention it keeps. */
export interface TenantRetention {
  tenantId: string;
  days: number;
}

/** What the sweep has to do, worked out from the settings alone. */
export interface SweepPlan {
  longestDays: number;
  /** Tenants with a retention of their own shorter than the longest. */
  shorter: TenantRetention[];
  /**
   * The default, when it is shorter than the longest (some Tenant keeps Events longer): every
   * Tenant in the events table that is not in `settings.tenants` is cleaned to it. Undefined when
   * the default is the longest: those Tenants are left to the partition drops.
   */
  defaultDays: number | undefined;
  /** Tenants with a retention of their own: not at the default, whatever their number of days. */
  ownRetention: ReadonlySet<string>;
}

export function sweepPlan(settings: RetentionSettings): SweepPlan {
  const longestDays = longestRetentionDays(settings);
  return {
    longestDays,
    shorter: settings.tenants.filter((t) => t.days < longestDays),
    defaultDays: settings.defaultDays < longestDays ? settings.defaultDays : undefined,
    ownRetention: new Set(settings.tenants.map((t) => t.tenantId.toLowerCase())),
  };
}

/** The receiving time before which a Tenant's Events go: `days` whole days before `now`. */
export function retentionCutoff(now: Date, days: number): Date {
  return new Date(now.getTime() - days * DAY_MS);
}
