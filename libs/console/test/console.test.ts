import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { PUBLISHABLE_KEY_SCOPES, SCOPES } from '@herald/auth';
import { CONSOLE_CSP, consoleFiles } from '../src/index.js';
import { PUBLISHABLE_SCOPES, SCOPES as CONSOLE_SCOPES } from '../src/app/scopes.js';

const appDir = fileURLToPath(new URL('../dist/app/', import.meta.url));

/** What a browser downloads for the console, gzipped, at most: it stays a small page. */
const BUDGET_GZIP_BYTES = 40 * 1024;

describe('the console', () => {
  it("when its key form offers scopes, then they are @herald/auth's, and a publishable key's only its own", () => {
    expect([...CONSOLE_SCOPES].sort()).toEqual([...SCOPES].sort());
    expect([...PUBLISHABLE_SCOPES]).toEqual([...PUBLISHABLE_KEY_SCOPES]);
  });

  it('when its page is built, then it loads only files of its own, with no inline script or style', () => {
    const html = readFileSync(path.join(appDir, 'index.html'), 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/);
    for (const [, src] of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      expect(src).toMatch(/^\.\/assets\/[\w.-]+\.(js|css)$/);
    }
  });

  it('when it is served, then its policy allows only its own scripts, styles and API, and no framing', () => {
    expect(CONSOLE_CSP).toContain("default-src 'none'");
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).toContain("connect-src 'self'");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe|\*|data:.*script/);
  });

  it(`when its files are gzipped, then together they stay under ${BUDGET_GZIP_BYTES / 1024} KiB`, () => {
    const gzipped = consoleFiles().map(({ name }) => ({
      name,
      bytes: zlib.gzipSync(readFileSync(path.join(appDir, name))).length,
    }));
    const total = gzipped.reduce((sum, f) => sum + f.bytes, 0);
    expect({ total, within: total <= BUDGET_GZIP_BYTES }).toEqual({ total, within: true });
  });
});
