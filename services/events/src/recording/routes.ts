import { assertIdentifierLookup, principalOf } from '@herald/auth';
import type { RouteHandler, RouteHandlers } from '@herald/http';
import { parseEventBatch, type EventRoute } from './event-batch.js';
import { recordEvents, type RecordingDeps } from './record-events.js';
import type { manifest } from '../manifest.js';

type Handlers = RouteHandlers<typeof manifest.routes>;

/** The four Event routes (docs/api-reference.md#events-and-dedup). */
export function eventHandlers(
  deps: RecordingDeps,
): Pick<
  Handlers,
  'recordByContactId' | 'recordByExternalId' | 'recordByEmail' | 'recordByOrganization'
> {
  const record =
    <R extends EventRoute>(route: R): RouteHandler<`/v1/events/${R}`> =>
    async (req, res) => {
      const events = parseEventBatch(route, req.body);
      const principal = principalOf(res);
      // A publishable key's guard on the other routes refused it already; here only an organization
      // can be named. Secret keys skip the scan.
      if (
        principal.publishable &&
        events.some((event) => event.organizationExternalId !== undefined)
      ) {
        assertIdentifierLookup(principal);
      }
      const { accepted } = await recordEvents(deps, route, principal.tenantId, events);
      res.status(202).json({ accepted });
    };
  return {
    recordByContactId: record('by-contact-id'),
    recordByExternalId: record('by-external-id'),
    recordByEmail: record('by-email'),
    recordByOrganization: record('by-organization'),
  };
}
