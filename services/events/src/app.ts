import type { Express } from 'express';
import {
  requireAdminToken,
  requireServiceCaller,
  type Scope,
  type ServiceCallers,
  type TenantDirectory,
} from '@herald/auth';
import { pingDatabase, type Pool } from '@herald/db';
import { bodyAdmission, createHttpApp, mountRoutes, type Logger } from '@herald/http';
import type { ApiPolicy } from '@herald/policy';
import type { Redis } from '@herald/redis';
import { redisDedupCache } from './recording/clients/redis-dedup-cache.js';
import { MAX_BODY_BYTES_IN_FLIGHT } from './config.js';
import { DEDUP_WINDOW_SECONDS } from './recording/dedup-key.js';
import type { ExportLimits } from './export-erasure/export.js';
import type { IdentityResolver } from './recording/identities.js';
import { recordingMetrics } from './recording/record-events.js';
import { createRecorder, type RecorderOptions } from './recording/recording-batcher.js';
import { adminHandlers } from './catalog/routes.js';
import type { LiveViewOptions } from './live/live-events.js';
import { liveHandlers } from './live/routes.js';
import { eventHandlers } from './recording/routes.js';
import { internalHandlers } from './export-erasure/routes.js';
import { tenantDeletionHandlers } from './tenant-deletion/routes.js';
import { manifest } from './manifest.js';

export interface EventsAppDeps {
  pool: Pool;
  logger: Logger;
  /** Tokens, rate budgets and subscription state of the public routes. */
  policy: ApiPolicy;
  /** The dedup fast path; PostgreSQL stays the authority, so Redis may be away. */
  redis: Redis;
  /** Resolves a request's identities: the local projection, then contacts in one call. */
  resolveIdentities: IdentityResolver;
  /** Whether a Tenant exists (the auth service), for the operator routes. */
  tenantExists: TenantDirectory;
  adminToken: string;
  /** Who may call the internal routes (SERVICE_CALLERS): the contacts service. */
  serviceCallers: ServiceCallers;
  /** The dedup window, 60 s. Tests may shorten it; nothing else should. */
  dedupWindowMs?: number;
  /** How requests' transactions are batched (RECORDING_* settings); defaults below. */
  recording?: Partial<Omit<RecorderOptions, 'windowMs'>>;
  /** Event request bodies handled at once, in bytes (bodyAdmission); default below. */
  maxBodyBytesInFlight?: number;
  /**
   * The Contact exports' own pool, of EXPORT_MAX_CONCURRENT connections: an export holds one for
   * as long as its reader takes, so exports never take the connections recording uses. Default
   * `pool` (tests of other things); the service always passes its own (index.ts).
   */
  exportPool?: Pool;
  /** Exports streaming at once, in all and per Tenant (EXPORT_* settings); defaults in export-erasure/export.ts. */
  exportLimits?: Partial<ExportLimits>;
  /** How long one call of the Tenant deletion route deletes before it answers (tests shorten it). */
  tenantDeletionTimeBudgetMs?: number;
  /** The console's live view: how often it reads and how much it passes on (tests change it). */
  liveView?: Partial<LiveViewOptions>;
}

export const RECORDING_DEFAULTS = { maxBatchEvents: 500, maxWaitMs: 1 } as const;

export function createApp(deps: EventsAppDeps): Express {
  const recording = {
    recorder: createRecorder(deps.pool, {
      ...RECORDING_DEFAULTS,
      ...deps.recording,
      windowMs: deps.dedupWindowMs ?? DEDUP_WINDOW_SECONDS * 1000,
    }),
    resolveIdentities: deps.resolveIdentities,
    dedupCache: redisDedupCache(deps.redis, { logger: deps.logger }),
    metrics: recordingMetrics(),
  };
  const admission = bodyAdmission({
    maxBytesInFlight: deps.maxBodyBytesInFlight ?? MAX_BODY_BYTES_IN_FLIGHT,
  });
  return createHttpApp({
    logger: deps.logger,
    // Redis is not a readiness dependency: recording works without it.
    readiness: {
      database: () => pingDatabase(deps.pool),
      revocations: () => deps.policy.ready(),
    },
    routes: (app) =>
      mountRoutes(
        app,
        manifest,
        {
          ...eventHandlers(recording),
          ...adminHandlers(deps),
          ...liveHandlers(deps),
          ...internalHandlers(deps),
          ...tenantDeletionHandlers(deps),
        },
        {
          bearer: (scope, options) => deps.policy.guard({ scope: scope as Scope, ...options }),
          admin: requireAdminToken(deps.adminToken),
          service: requireServiceCaller(deps.serviceCallers),
        },
        { admission: admission.handler },
      ),
  });
}
