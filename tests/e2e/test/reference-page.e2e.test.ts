// The rendered API reference at /docs, loaded in a real browser (Debian's Chromium driven by
// playwright-core) from the running stack through the ingress: every operation of the served
// OpenAPI document must appear on it. A screenshot is kept under .herald/test-output/.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { launchChromium } from './browser.js';
import { INGRESS, repoRoot } from './support.js';

/** What the test reads of an element in the page (no DOM typings in the test's program). */
interface PageElement {
  querySelector(selector: string): {
    textContent: string | null;
    getAttribute(name: string): string | null;
  } | null;
}

interface Document {
  paths: Record<string, Record<string, { operationId: string }>>;
}

const outputDir = path.join(repoRoot, '.herald', 'test-output');
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
}, 660_000);

afterAll(async () => {
  await browser?.close();
});

describe('GET /v1/openapi.json', () => {
  it('serves the generated document, cacheable and readable from browsers', async () => {
    const res = await fetch(`${INGRESS}/v1/openapi.json`, {
      headers: { origin: 'https://app.example' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const generated = JSON.parse(
      fs.readFileSync(path.join(repoRoot, 'libs', 'api-reference', 'openapi.json'), 'utf8'),
    ) as unknown;
    expect(await res.json()).toEqual(generated);

    const etag = res.headers.get('etag');
    expect(etag).toBeTruthy();
    const again = await fetch(`${INGRESS}/v1/openapi.json`, {
      headers: { 'if-none-match': etag! },
    });
    expect(again.status).toBe(304);
  });

  it('answers 405 with Allow to other methods', async () => {
    const res = await fetch(`${INGRESS}/v1/openapi.json`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
  });
});

describe('GET /docs', () => {
  it('renders every operation of the served document, from this origin only', async () => {
    const answer = await fetch(`${INGRESS}/v1/openapi.json`);
    const document = await answer.json<Document>();
    const operations = Object.entries(document.paths).flatMap(([p, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ method, path: p, id: op.operationId })),
    );
    expect(operations.length).toBeGreaterThan(20);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const foreign: string[] = [];
    const failed: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(INGRESS) && !req.url().startsWith('data:')) foreign.push(req.url());
    });
    page.on('requestfailed', (req) => failed.push(req.url()));
    page.on('pageerror', (err) => failed.push(err.message));

    const loaded = await page.goto(`${INGRESS}/docs`, { waitUntil: 'networkidle' });
    expect(loaded?.status()).toBe(200);
    await page.waitForSelector('.opblock', { timeout: 30_000 });

    const shown = await page.$$eval('.opblock', (blocks: PageElement[]) =>
      blocks.map((block) => ({
        method: block.querySelector('.opblock-summary-method')?.textContent?.trim().toLowerCase(),
        path: block.querySelector('.opblock-summary-path')?.getAttribute('data-path'),
        id: block.querySelector('.opblock-summary-operation-id')?.textContent?.trim(),
      })),
    );
    for (const op of operations) {
      expect(shown).toContainEqual({ method: op.method, path: op.path, id: op.id });
    }
    expect(shown).toHaveLength(operations.length);
    const title = await page.textContent('.info .title');
    expect(title).toContain(
      String((document as unknown as { info: { title: string } }).info.title),
    );

    fs.mkdirSync(outputDir, { recursive: true });
    const screenshot = path.join(outputDir, 'api-reference.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    // A blank page would be a few kilobytes of one colour.
    expect(fs.statSync(screenshot).size).toBeGreaterThan(50_000);

    expect(foreign).toEqual([]);
    expect(failed).toEqual([]);
    await page.close();
  }, 120_000);
});
