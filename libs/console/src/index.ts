// Serves the operator console's built files (dist/app, written by `vite build`): its page at
// /console and its hashed scripts and styles at /console/assets/<name>. Everything is read once
// at start, so a missing build fails the process at once rather than a request later.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Request, Response } from 'express';

// This file runs from src/ (tests) or dist/ (built); the app is built into dist/app either way.
const packageDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const appDir = path.join(packageDir, 'dist', 'app');

/**
 * The page's policy: only its own scripts, styles and API (no inline code of any kind), and
 * no framing, so that another site cannot put the console under a visitor's clicks.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface StaticFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
};

function staticFile(file: string): StaticFile {
  const body = readFileSync(file);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, contentType: TYPES[path.extname(file)] ?? 'application/octet-stream', etag };
}

const page = staticFile(path.join(appDir, 'index.html'));
const assets: ReadonlyMap<string, StaticFile> = new Map(
  readdirSync(path.join(appDir, 'assets')).map((name) => [
    name,
    staticFile(path.join(appDir, 'assets', name)),
  ]),
);

/** The built files by name, with their sizes in bytes: what the bundle costs a browser. */
export function consoleFiles(): { name: string; bytes: number }[] {
  return [
    { name: 'index.html', bytes: page.body.length },
    ...[...assets].map(([name, file]) => ({ name: `assets/${name}`, bytes: file.body.length })),
  ];
}

function send(req: Request, res: Response, file: StaticFile, cacheControl: string): void {
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('ETag', file.etag);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  const match = req.get('if-none-match');
  if (match?.split(/\s*,\s*/).some((tag) => tag === file.etag || tag === '*')) {
    res.status(304).end();
    return;
  }
  res.status(200).type(file.contentType).send(file.body);
}

/**
 * `GET /console/`: the page, revalidated on every load so a new release shows at once. Its
 * files are named relative to it, so `/console` is sent on to `console/` (relative, so that a
 * path prefix in front of Herald stays in the address).
 */
export function serveConsolePage(req: Request, res: Response): void {
  if (!req.path.endsWith('/')) {
    res.redirect(301, 'console/');
    return;
  }
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  send(req, res, page, 'no-cache');
}

/**
 * `GET /console/assets/:name`: a script or style of the page. Their names carry a hash of
 * their contents, so a browser keeps them for good; any other name is not served (false).
 */
export function serveConsoleAsset(req: Request<{ name: string }>, res: Response): boolean {
  const file = assets.get(req.params.name);
  if (!file) return false;
  send(req, res, file, 'public, max-age=31536000, immutable');
  return true;
}
