// examples/browser in a real browser (Debian's Chromium driven by playwright-core): the page and
// the SDK's build are served by the example's own static server (examples/browser/serve.mjs, on
// another origin than the API), and the page records an Event with a publishable key through
// the ingress, cross-origin (CORS). The Event must then be in the Contact's export.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { launchChromium } from './browser.js';
import { INGRESS, accessToken, call, newKey, newTenant, repoRoot } from './support.js';

const SERVE = path.join(repoRoot, 'examples', 'browser', 'serve.mjs');

let browser: Browser;
let server: ChildProcess | undefined;
let pageOrigin: string;

/** The example's static server on a free port, once it prints its address. */
function startServer(): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0' };
  delete env.NODE_OPTIONS; // jest's VM flags are not the example's
  const child = spawn(process.execPath, [SERVE], { env, cwd: repoRoot });
  server = child;
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`serve.mjs did not start:\n${output}`)),
      20_000,
    );
    child.stderr.on('data', (d) => (output += String(d)));
    child.stdout.on('data', (d) => {
      output += String(d);
      const url = /serving (http:\/\/\S+?)\/?$/m.exec(output)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve.mjs exited ${code}:\n${output}`));
    });
  });
}

beforeAll(async () => {
  browser = await launchChromium();
  pageOrigin = await startServer();
}, 660_000);

afterAll(async () => {
  await browser?.close();
  server?.kill('SIGTERM');
});

describe('examples/browser', () => {
  it('records an Event from the page with a publishable key, cross-origin', async () => {
    // The page's origin is not the API's: every call it makes is a CORS request.
    expect(new URL(pageOrigin).origin).not.toBe(new URL(INGRESS).origin);

    const tenant = await newTenant('Example browser');
    const token = await accessToken(tenant, ['contacts:write', 'contacts:export']);
    const created = await call('PUT', '/v1/contacts/visitor-1', token, {
      email: 'visitor@example.com',
    });
    expect(created.status).toBe(201);
    const { id: contactId } = await created.json();
    // Its tokens work from the example page's Origin only, which Chromium sends.
    const publishable = await newKey(tenant, {
      kind: 'publishable',
      allowedOrigins: [new URL(pageOrigin).origin],
    });

    const page = await browser.newPage();
    const problems: string[] = [];
    const answers: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (req) => problems.push(`failed: ${req.method()} ${req.url()}`));
    page.on('response', (res) => {
      if (res.url().startsWith(INGRESS)) {
        answers.push(`${res.request().method()} ${new URL(res.url()).pathname} ${res.status()}`);
      }
    });

    const query = new URLSearchParams({
      url: INGRESS.replace(/\/+$/, ''),
      key: publishable.clientId,
      contact: contactId,
      event: 'Button Clicked',
    });
    const loaded = await page.goto(`${pageOrigin}/?${query.toString()}`, { waitUntil: 'load' });
    expect(loaded?.status()).toBe(200);
    await page.click('#send');
    await page.waitForSelector('#status[data-state="recorded"], #status[data-state="failed"]', {
      timeout: 30_000,
    });
    const status = await page.textContent('#status');
    expect(status).toMatch(/^Recorded \(1 Event, dedupKey [0-9a-f-]{36}\)\.$/);
    const dedupKey = /dedupKey (\S+)\)/.exec(status!)![1];
    // The browser itself called the API: the token exchange, then the Event route.
    expect(answers).toStrictEqual(['POST /v1/token 200', 'POST /v1/events/by-contact-id 202']);
    expect(problems).toStrictEqual([]);
    await page.close();

    const exported = await call('GET', `/v1/contacts/by-id/${contactId}/export`, token);
    expect(exported.status).toBe(200);
    const lines = (await exported.text())
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.slice(1)).toStrictEqual([
      {
        type: 'event',
        data: expect.objectContaining({
          eventName: 'Button Clicked',
          dedupKey,
          properties: expect.objectContaining({ page: '/' }),
        }),
      },
    ]);
  }, 120_000);
});
