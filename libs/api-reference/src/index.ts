import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Request, Response } from 'express';

const packageDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const swaggerUiDir = path.dirname(
  createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
);

/** A file served as it is, read once at start: its bytes, type and validator. */
interface StaticFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

function staticFile(file: string, contentType: string): StaticFile {
  const body = readFileSync(file);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, contentType, etag };
}

// Read at start, so a missing file fails the process at once rather than a request later.
const document = staticFile(path.join(packageDir, 'openapi.json'), 'application/json');
const page = staticFile(path.join(packageDir, 'static', 'index.html'), 'text/html; charset=utf-8');

/** What the page loads, by the name in its URL (`/docs/assets/<name>`); nothing else is served. */
const assets: ReadonlyMap<string, StaticFile> = new Map([
  [
    'swagger-ui.css',
    staticFile(path.join(swaggerUiDir, 'swagger-ui.css'), 'text/css; charset=utf-8'),
  ],
  [
    'swagger-ui-bundle.js',
    staticFile(path.join(swaggerUiDir, 'swagger-ui-bundle.js'), 'text/javascript; charset=utf-8'),
  ],
  [
    'reference.js',
    staticFile(path.join(packageDir, 'static', 'reference.js'), 'text/javascript; charset=utf-8'),
  ],
  [
    'reference.css',
    staticFile(path.join(packageDir, 'static', 'reference.css'), 'text/css; charset=utf-8'),
  ],
]);

/** The parsed OpenAPI document, for tests and tools. */
export function openApiDocument(): Record<string, unknown> {
  return JSON.parse(document.body.toString('utf8')) as Record<string, unknown>;
}

// The files change only with a release: caches keep them five minutes, then revalidate by ETag.
const CACHE_CONTROL = 'public, max-age=300';

function send(req: Request, res: Response, file: StaticFile): void {
  res.setHeader('Cache-Control', CACHE_CONTROL);
  res.setHeader('ETag', file.etag);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  const match = req.get('if-none-match');
  if (
    match !== undefined &&
    match.split(/\s*,\s*/).some((tag) => tag === file.etag || tag === '*')
  ) {
    res.status(304).end();
    return;
  }
  res.status(200).type(file.contentType).send(file.body);
}

/** `GET /v1/openapi.json`: the document this package holds. */
export function serveOpenApiDocument(req: Request, res: Response): void {
  send(req, res, document);
}

/**
 * `GET /docs`: the rendered reference. Everything it loads comes from this origin (no CDN), and
 * its Content-Security-Policy says so.
 */
export function serveReferencePage(req: Request, res: Response): void {
  res.setHeader(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
      "connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  );
  send(req, res, page);
}

/** `GET /docs/assets/:name`: the page's scripts and styles; any other name is a 404. */
export function serveReferenceAsset(req: Request<{ name: string }>, res: Response): boolean {
  const file = assets.get(req.params.name);
  if (!file) return false;
  send(req, res, file);
  return true;
}
