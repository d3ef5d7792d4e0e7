import type { Express } from 'express';
import { principalOf } from '@herald/auth';
import { methodNotAllowed } from '@herald/errors';
import { jsonBody, publicCors } from '@herald/http';
import type { ApiPolicy } from '@herald/policy';
import { EVENT_ROUTES, parseEventBatch, type EventRoute } from '../domain/event-batch.js';
import { recordEvents, type RecordingDeps } from '../domain/record-events.js';

/**
 * The four Event routes (spec 4.4). Publishable keys call them from browsers: CORS on every
 * answer, errors included (decisions D.3).
 */
export function mountEventRoutes(app: Express, deps: RecordingDeps & { policy: ApiPolicy }): void {
  app.use('/v1/events', publicCors(['POST']));
  // One request, one token from the write budget, whatever the array's length (spec 8).
  const write = deps.policy.guard({ scope: 'events:write' });
  for (const route of Object.keys(EVENT_ROUTES) as EventRoute[]) {
    app
      .route(`/v1/events/${route}`)
      .post(write, ...jsonBody(), async (req, res) => {
        const events = parseEventBatch(route, req.body);
        const { accepted } = await recordEvents(deps, route, principalOf(res).tenantId, events);
        res.status(202).json({ accepted });
      })
      .all(methodNotAllowed(['POST']));
  }
}
