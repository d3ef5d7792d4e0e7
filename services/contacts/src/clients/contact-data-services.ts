import { AppError, errors } from '@herald/errors';
import { contactDataRoutes, internalClient } from '@herald/internal-api';

/**
 * The other services that hold data about Contacts (the events service), by base URL, and the
 * credential of Herald's internal routes. Each one answers the routes of `contactDataRoutes`:
 *
 * - the export: 200 with its lines of the export file (JSON Lines, e.g.
 *   `{"type":"event","data":{…}}`), none when it holds nothing about the Contact; 429 with
 *   Retry-After when the Tenant already has as many exports streaming there as it may (relayed
 *   to the caller as it is), 503 when it is busy or down;
 * - the erasure: 204 once it holds nothing about the Contact any more (idempotent).
 */
export interface ContactDataServices {
  baseUrls: readonly string[];
  serviceToken: string;
}

export type ParticipantAction = 'export' | 'erase';

/** One service holding data about Contacts. */
export interface Participant {
  url(tenantId: string, contactId: string, action: ParticipantAction): string;
  /**
   * GET for the export, POST for the erasure; rejects when unreachable or too slow, and with a
   * 429 `rate_limited` AppError when it refuses the export for the Tenant's own cap.
   */
  send(tenantId: string, contactId: string, action: ParticipantAction): Promise<Response>;
}

/** How long a participant may take to answer with its status and headers. */
const HEADERS_TIMEOUT_MS = 10_000;

/** The route each action calls. */
const ROUTES = {
  export: contactDataRoutes.exportContactEvents,
  erase: contactDataRoutes.eraseContactEvents,
} as const;

/**
 * The participants, each called with a timeout that covers the answer's status and headers only:
 * the body of an export may stream for as long as it takes.
 */
export function contactDataServices(services: ContactDataServices): Participant[] {
  return services.baseUrls.map((baseUrl) => {
    const client = internalClient(ROUTES, {
      baseUrl,
      serviceToken: services.serviceToken,
      serviceName: baseUrl,
      timeoutMs: HEADERS_TIMEOUT_MS,
    });
    return {
      url: (tenantId, contactId, action) => client[action].url({ params: { tenantId, contactId } }),
      send: async (tenantId, contactId, action) => {
        const res = await client[action].send({
          params: { tenantId, contactId },
          timeoutCovers: 'headers',
        });
        if (action === 'export' && res.status === 429) {
          await discard(res);
          throw tenantExportsBusy(res.headers.get('retry-after'));
        }
        return res;
      },
    };
  });
}

const TENANT_EXPORTS_BUSY =
  'this tenant has too many exports streaming at once; nothing was exported; retry after the number of seconds in Retry-After';

/** The participant's 429: the Tenant's own exports at their cap there, with its Retry-After. */
function tenantExportsBusy(retryAfter: string | null): AppError {
  const seconds = Number(retryAfter);
  return errors.rateLimited(
    Number.isFinite(seconds) && seconds > 0 ? seconds : 5,
    TENANT_EXPORTS_BUSY,
  );
}

/**
 * What the export answers for a failure to open the participants' exports: a participant's 429
 * (the Tenant's own exports at their cap) as it is, rather than the 503 it is wrapped in;
 * anything else unchanged.
 */
export function exportRefusal(err: unknown): unknown {
  const cause = err instanceof AppError ? err.cause : undefined;
  return cause instanceof AppError && cause.status === 429 ? cause : err;
}

/** Lets go of an answer's body without reading it (the connection is not kept waiting). */
export async function discard(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => {});
}
