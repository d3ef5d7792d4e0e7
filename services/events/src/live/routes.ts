import type { Response } from 'express';
import type { TenantDirectory } from '@herald/auth';
import type { Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { isUuid, type Logger, type RouteHandlers } from '@herald/http';
import type { LiveEvent } from './data/live-events-repository.js';
import { LIVE_VIEW_DEFAULTS, watchLiveEvents, type LiveViewOptions } from './live-events.js';
import type { manifest } from '../manifest.js';

/** Live views one process serves at once: each reads PostgreSQL twice a second. */
export const MAX_LIVE_VIEWS = 16;

/** What a caller may leave unread before its view is ended: about a minute at the cap. */
const MAX_UNREAD_BYTES = 1024 * 1024;

/** One Server-Sent Events message; JSON.stringify leaves no line break in `data`. */
const message = (event: string, data: unknown, id?: string) =>
  `event: ${event}\n${id ? `id: ${id}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

const liveEventBody = (e: LiveEvent) => ({
  id: e.id,
  eventName: e.eventName,
  contactId: e.contactId,
  organizationExternalId: e.organizationExternalId,
  occurredAt: e.occurredAt.toISOString(),
  receivedAt: e.receivedAt.toISOString(),
  // the JSON text as it was recorded, as a string: its numbers and key order stay exact
  properties: e.properties,
});

/** Operator API: a Tenant's Events as they are recorded (the console's live view). */
export function liveHandlers(deps: {
  pool: Pool;
  tenantExists: TenantDirectory;
  logger: Logger;
  liveView?: Partial<LiveViewOptions>;
}): Pick<RouteHandlers<typeof manifest.routes>, 'liveEvents'> {
  const open = new Set<Response>();
  const options = { ...LIVE_VIEW_DEFAULTS, ...deps.liveView };
  return {
    liveEvents: async (req, res) => {
      // From the start: a caller that leaves while the Tenant is looked up leaves no view behind.
      const stop = new AbortController();
      res.once('close', () => stop.abort());
      // A draining process ends its views at once: their clients reconnect to another pod.
      const draining = (req.app.locals as { draining?: AbortSignal }).draining;
      const drained = () => stop.abort();
      draining?.addEventListener('abort', drained, { once: true });
      try {
        const tenantId = req.params.tenantId;
        if (!isUuid(tenantId) || !(await deps.tenantExists(tenantId))) {
          throw errors.notFound('no such tenant');
        }
        if (open.size >= MAX_LIVE_VIEWS) {
          throw errors.unavailable('too many live views are open here; retry later');
        }
        if (stop.signal.aborted || draining?.aborted) return;
        open.add(res);
        res.status(200).set({
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          // nginx (and ingress-nginx) pass each message on at once instead of buffering
          'x-accel-buffering': 'no',
        });
        res.flushHeaders();
        res.write(
          `retry: 3000\n: the Events of tenant ${tenantId.toLowerCase()} as they are recorded\n\n`,
        );
        // A caller that stops reading is dropped rather than buffered for without end.
        const write = (text: string) => {
          if (!res.write(text) && res.writableLength > MAX_UNREAD_BYTES) stop.abort();
        };
        await watchLiveEvents(
          deps.pool,
          tenantId.toLowerCase(),
          {
            event: (e) => write(message('recorded', liveEventBody(e), e.id)),
            skipped: (count, atLeast) => write(message('skipped', { count, atLeast })),
            idle: () => write(': idle\n\n'),
          },
          stop.signal,
          options,
        );
        res.end();
      } catch (err) {
        if (!res.headersSent) throw err;
        // Headers are gone: the stream ends, and the browser's view says it stopped.
        deps.logger.warn({ err, requestId: res.locals.requestId as unknown }, 'live view failed');
        res.end();
      } finally {
        open.delete(res);
        draining?.removeEventListener('abort', drained);
      }
    },
  };
}
