import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { principalOf } from '@herald/auth';
import type { Pool } from '@herald/db';
import type { Logger, RouteHandlers } from '@herald/http';
import { eraseContact } from '../domain/erasure.js';
import { exportRefusal, type ContactDataServices } from '../clients/contact-data-services.js';
import { exportContact, type ContactRef } from '../domain/export.js';
import type { manifest } from '../manifest.js';
import { tenantIdOf } from './admin.js';

type Handlers = RouteHandlers<typeof manifest.routes>;

/** GDPR export and erasure (docs/api-reference.md#export-and-erasure), by service id and by externalId. */
export function exportEraseHandlers(options: {
  pool: Pool;
  logger: Logger;
  serviceToken: string;
  /** Base URLs of the services holding data about Contacts; default none. */
  contactDataServiceUrls?: readonly string[] | undefined;
}): Pick<
  Handlers,
  | 'exportContactById'
  | 'eraseContactById'
  | 'exportContact'
  | 'eraseContact'
  | 'operatorExportContact'
  | 'operatorEraseContact'
> {
  const contactDataServices: ContactDataServices = {
    baseUrls: options.contactDataServiceUrls ?? [],
    serviceToken: options.serviceToken,
  };
  const deps = { pool: options.pool, contactDataServices };

  async function sendExport(res: Response, tenantId: string, ref: ContactRef): Promise<void> {
    const { contactId, stream } = await exportContact(deps, tenantId, ref).catch((err: unknown) => {
      // A participant's 429 stays a 429 with its Retry-After; other failures are the 503.
      throw exportRefusal(err);
    });
    res
      .status(200)
      .type('application/x-ndjson')
      .set('Content-Disposition', `attachment; filename="contact-${contactId}.ndjson"`);
    try {
      await pipeline(stream, res);
    } catch (err) {
      // Too late for an error answer: the connection is cut, so the client sees an incomplete
      // transfer, never a file that merely looks complete. A client that went away is no news.
      res.destroy();
      if ((err as { code?: unknown }).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        options.logger.warn(
          { err, requestId: res.locals.requestId as unknown },
          'export stream broke',
        );
      }
    }
  }

  async function erase(res: Response, tenantId: string, ref: ContactRef): Promise<void> {
    await eraseContact(deps, tenantId, ref);
    res.status(204).end();
  }

  const tenantOf = (res: Response) => principalOf(res).tenantId;
  return {
    exportContactById: (req, res) => sendExport(res, tenantOf(res), { id: req.params.id }),
    eraseContactById: (req, res) => erase(res, tenantOf(res), { id: req.params.id }),
    exportContact: (req, res) =>
      sendExport(res, tenantOf(res), { externalId: req.params.externalId }),
    eraseContact: (req, res) => erase(res, tenantOf(res), { externalId: req.params.externalId }),
    // The operator names the Tenant in the path; an unknown one holds no such Contact: 404.
    operatorExportContact: (req, res) =>
      sendExport(res, tenantIdOf(req.params.tenantId), { id: req.params.contactId }),
    operatorEraseContact: (req, res) =>
      erase(res, tenantIdOf(req.params.tenantId), { id: req.params.contactId }),
  };
}
