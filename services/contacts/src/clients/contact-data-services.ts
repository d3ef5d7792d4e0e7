import { createInternalClient } from '@herald/http';

/**
 * The other services that hold data about Contacts (the events service), by base URL, and the
 * credential of Herald's internal routes. Each one answers, under
 * `/internal/v1/tenants/{tenantId}/contacts/{contactId}`:
 *
 * - `GET …/export`: 200 with its lines of the export file (JSON Lines, e.g.
 *   `{"type":"event","data":{…}}`), none when it holds nothing about the Contact;
 * - `POST …/erase`: 204 once it holds nothing about the Contact any more (idempotent).
 */
export interface ContactDataServices {
  baseUrls: readonly string[];
  serviceToken: string;
}

export type ParticipantAction = 'export' | 'erase';

/** One service holding data about Contacts. */
export interface Participant {
  url(tenantId: string, contactId: string, action: ParticipantAction): string;
  /** GET for the export, POST for the erasure; rejects when unreachable or too slow. */
  send(tenantId: string, contactId: string, action: ParticipantAction): Promise<Response>;
}

/** How long a participant may take to answer with its status and headers. */
const HEADERS_TIMEOUT_MS = 10_000;

const pathOf = (tenantId: string, contactId: string, action: ParticipantAction) =>
  `/internal/v1/tenants/${encodeURIComponent(tenantId)}/contacts/${encodeURIComponent(contactId)}/${action}`;

/**
 * The participants, each called with a timeout that covers the answer's status and headers only:
 * the body of an export may stream for as long as it takes.
 */
export function contactDataServices(services: ContactDataServices): Participant[] {
  return services.baseUrls.map((baseUrl) => {
    const client = createInternalClient({
      baseUrl,
      serviceToken: services.serviceToken,
      serviceName: baseUrl,
      timeoutMs: HEADERS_TIMEOUT_MS,
    });
    return {
      url: (tenantId, contactId, action) => client.url(pathOf(tenantId, contactId, action)),
      send: (tenantId, contactId, action) =>
        client.send({
          method: action === 'export' ? 'GET' : 'POST',
          path: pathOf(tenantId, contactId, action),
          timeoutCovers: 'headers',
        }),
    };
  });
}

/** Lets go of an answer's body without reading it (the connection is not kept waiting). */
export async function discard(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => {});
}
