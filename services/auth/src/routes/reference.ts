import {
  serveOpenApiDocument,
  serveReferenceAsset,
  serveReferencePage,
} from '@herald/api-reference';
import { errors } from '@herald/errors';
import type { RouteHandlers } from '@herald/http';
import type { manifest } from '../manifest.js';

type Handlers = RouteHandlers<typeof manifest.routes>;

/** The OpenAPI document and the page that renders it (@herald/api-reference). */
export function referenceHandlers(): Pick<
  Handlers,
  'openApiDocument' | 'referencePage' | 'referenceAsset'
> {
  return {
    openApiDocument: serveOpenApiDocument,
    referencePage: serveReferencePage,
    referenceAsset: (req, res) => {
      if (!serveReferenceAsset(req, res)) throw errors.notFound(`no file ${req.params.name}`);
    },
  };
}
