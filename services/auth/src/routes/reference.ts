import {
  serveOpenApiDocument,
  serveReferenceAsset,
  serveReferencePage,
} from '@herald/api-reference';
import { serveConsoleAsset, serveConsolePage } from '@herald/console';
import { errors } from '@herald/errors';
import type { RouteHandlers } from '@herald/http';
import type { manifest } from '../manifest.js';

type Handlers = RouteHandlers<typeof manifest.routes>;

/**
 * The pages people read: the OpenAPI document and the page that renders it
 * (@herald/api-reference), and the operator console (@herald/console).
 */
export function referenceHandlers(): Pick<
  Handlers,
  'openApiDocument' | 'referencePage' | 'referenceAsset' | 'consolePage' | 'consoleAsset'
> {
  return {
    consolePage: serveConsolePage,
    consoleAsset: (req, res) => {
      if (!serveConsoleAsset(req, res)) throw errors.notFound(`no file ${req.params.name}`);
    },
    openApiDocument: serveOpenApiDocument,
    referencePage: serveReferencePage,
    referenceAsset: (req, res) => {
      if (!serveReferenceAsset(req, res)) throw errors.notFound(`no file ${req.params.name}`);
    },
  };
}
