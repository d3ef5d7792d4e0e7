// The operator console at /console, in a real browser (Debian's Chromium driven by
// playwright-core) through the ingress, as an operator uses it: sign in with the admin token,
// create a Tenant, a key (its secret copied), revoke it, suspend and reactivate, look a Contact
// up, export and erase it, watch an Event arrive live, sign out. Each page's screenshot is kept
// under .herald/test-output/console/ and checked; axe-core checks each page's accessibility.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { boxHolds, decodePng, inkOf, launchChromium } from './browser.js';
import {
  INGRESS,
  accessToken,
  adminToken,
  basic,
  call,
  dataDir,
  exchange,
  newTenant,
  repoRoot,
} from './support.js';

const CONSOLE = `${INGRESS}/console/`;
const outputDir = path.join(repoRoot, '.herald', 'test-output', 'console');
const axeSource = fs.readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);
const ACCENT: [number, number, number] = [0x1d, 0x4e, 0xd8];

let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Every URL the page asked for, and every console message it logged. */
const requested: string[] = [];
const logged: string[] = [];
const startedAt = Date.now();

beforeAll(async () => {
  fs.mkdirSync(outputDir, { recursive: true });
  browser = await launchChromium();
  context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: INGRESS });
  page = await context.newPage();
  page.on('request', (r) => requested.push(r.url()));
  page.on('console', (m) => logged.push(`${m.type()}: ${m.text()}`));
}, 660_000);

afterAll(async () => {
  await browser?.close();
});

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[];
}

/** The page's screenshot, kept and checked: not blank, and `checks` hold on its pixels. */
async function screenshot(name: string, accentOn?: string) {
  const file = path.join(outputDir, `${name}.png`);
  const png = await page.screenshot({ path: file, fullPage: false });
  const picture = decodePng(png);
  const ink = inkOf(picture);
  expect([name, ink.share > 0.005, ink.colours > 20]).toEqual([name, true, true]);
  if (accentOn) {
    // the element is on screen where the page says it is, drawn in the accent colour
    const box = await page.getByRole('button', { name: accentOn }).first().boundingBox();
    expect(box).not.toBeNull();
    expect([name, accentOn, boxHolds(picture, box!, ACCENT)]).toEqual([name, accentOn, true]);
  }
  // axe-core through the DevTools protocol: the page's own CSP allows no injected script tag
  await page.evaluate(axeSource);
  const result = await page.evaluate(() =>
    (globalThis as unknown as { axe: { run: (o: unknown) => Promise<AxeResult> } }).axe.run({
      runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'],
    }),
  );
  const serious = result.violations.filter(
    (v) => v.impact === 'serious' || v.impact === 'critical',
  );
  expect([name, serious.map((v) => `${v.id}: ${v.help}`)]).toEqual([name, []]);
}

const tenantName = `Console E2E ${Date.now()}`;
let tenantId = '';

describe('the operator console in Chromium', () => {
  it('when opened, then the page is served with a strict CSP and no inline script, and asks for the admin token', async () => {
    const res = await fetch(CONSOLE);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=/);

    await page.goto(CONSOLE);
    await expect(page.getByRole('heading', { name: 'Herald console' }).isVisible()).resolves.toBe(
      true,
    );
    await screenshot('sign-in');
  }, 60_000);

  it('when a wrong token is given, then a readable error with its request id, and still signed out', async () => {
    await page.getByLabel('Admin token').fill('wrong-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(
      /admin token.*\(unauthenticated, request id [0-9a-f]+\)/i,
    );
  }, 60_000);

  it('when the token is typed and Enter pressed, using the keyboard only, then the Tenants page shows', async () => {
    await page.getByLabel('Admin token').fill('');
    await page.keyboard.press('Tab');
    await page.getByLabel('Admin token').focus();
    await page.keyboard.type(adminToken());
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Tenants' }).waitFor();
    await screenshot('tenants', 'Search');
  }, 60_000);

  it('when a Tenant is created, then its page shows, and it is found by a search', async () => {
    await page.getByLabel('Name', { exact: true }).fill(tenantName);
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await page.getByRole('heading', { name: tenantName }).waitFor();
    tenantId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!);
    expect(tenantId).toMatch(/^[0-9a-f-]{36}$/);
    await page.getByText('State:').waitFor();
    await screenshot('tenant-overview');

    await page.goto(`${CONSOLE}#/`);
    await page.getByLabel('Search by name or id').fill(tenantName.toLowerCase());
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: tenantName }).waitFor();
    await page.getByRole('link', { name: tenantName }).click();
    await page.getByRole('heading', { name: tenantName }).waitFor();
  }, 60_000);

  it('when suspended and reactivated, then the subscription state follows', async () => {
    await page.getByRole('button', { name: 'Suspend (record failed payments)' }).click();
    await page.locator('.state-suspended').waitFor();
    const billing = await fetch(`${INGRESS}/admin/v1/tenants/${tenantId}/billing`, {
      headers: { authorization: `Bearer ${adminToken()}` },
    });
    expect(await billing.json()).toMatchObject({ state: 'suspended' });
    await page.getByRole('button', { name: 'Reactivate (payment details updated)' }).click();
    await page.locator('.state-active').waitFor();
  }, 60_000);

  let clientId = '';
  let secret = '';
  it('when a secret key is created, then its secret is shown once with a copy button that copies it, and it works', async () => {
    await page.getByRole('link', { name: 'API keys' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'New key' }).waitFor();
    await page.getByLabel('Name (optional)').fill('console backend');
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Key created' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('you will not see it again');
    secret = await dialog.getByLabel('Secret').inputValue();
    clientId = (await dialog.locator('code').first().textContent()) ?? '';
    expect(secret).toMatch(/^sk_/);
    await screenshot('key-created', 'Copy secret');
    await dialog.getByRole('button', { name: 'Copy secret' }).click();
    await dialog.getByText('Copied to the clipboard.').waitFor();
    expect(
      await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      ),
    ).toBe(secret);
    expect((await exchange(basic(clientId, secret))).status).toBe(200);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('cell', { name: clientId }).waitFor();
    // the list never shows a secret again
    expect(await page.content()).not.toContain(secret);
  }, 60_000);

  it('when the key is revoked with its typed confirmation, then it is marked revoked and refused', async () => {
    const row = page.getByRole('row').filter({ hasText: clientId });
    await row.getByRole('button', { name: 'Revoke…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    const confirm = dialog.getByRole('button', { name: 'Revoke key' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(/Type .* to confirm/).fill(clientId);
    await confirm.click();
    await row.getByText(/^revoked /).waitFor();
    await screenshot('keys');
    expect((await exchange(basic(clientId, secret))).status).toBe(401);
  }, 60_000);

  it('when an organization is created, then it is listed', async () => {
    await page.getByRole('link', { name: 'Organizations' }).click();
    await page.getByLabel('External id').fill('console-org');
    await page.getByLabel('Name (optional)').fill('Console Org');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('cell', { name: 'console-org' }).waitFor();
    await screenshot('organizations');
  }, 60_000);

  let contact = { id: '', email: '' };
  let token = '';
  it("when an Event is recorded through the public API, then the live view shows it within 2 s, and another Tenant's Event never", async () => {
    token = await accessToken(tenantId, ['contacts:write', 'contacts:read', 'events:write']);
    contact.email = `console-${Date.now()}@example.com`;
    const put = await call('PUT', '/v1/contacts/console-1', token, { email: contact.email });
    contact = { ...contact, id: (await put.json<{ id: string }>()).id };
    const other = await newTenant('Console E2E other');
    const otherToken = await accessToken(other, ['contacts:write', 'events:write']);
    const otherContact = await (
      await call('PUT', '/v1/contacts/other-1', otherToken, {
        email: `other-${Date.now()}@example.com`,
      })
    ).json<{ id: string }>();

    await page.getByRole('link', { name: 'Live events' }).click();
    await page.getByText('Showing events as they are recorded.').waitFor();
    await new Promise((r) => setTimeout(r, 500));
    const record = (t: string, contactId: string, eventName: string) =>
      call('POST', '/v1/events/by-contact-id', t, {
        contactId,
        eventName,
        occurredAt: new Date().toISOString(),
        dedupKey: `${eventName}-${Date.now()}`,
        properties: { plan: 'team' },
      });
    expect((await record(otherToken, otherContact.id, 'Other Tenant Event')).status).toBe(202);
    const sentAt = Date.now();
    expect((await record(token, contact.id, 'Console Live Event')).status).toBe(202);
    await page.getByRole('cell', { name: 'Console Live Event' }).waitFor({ timeout: 5_000 });
    expect(Date.now() - sentAt).toBeLessThan(2_000);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await page.getByRole('table').textContent()).not.toContain('Other Tenant Event');
    expect(await page.getByRole('table').textContent()).toContain('{"plan":"team"}');
    await screenshot('live-events');

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText('Paused.').waitFor();
    expect((await record(token, contact.id, 'While Paused')).status).toBe(202);
    await new Promise((r) => setTimeout(r, 1_200));
    expect(await page.getByRole('table').textContent()).not.toContain('While Paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByText('Showing events as they are recorded.').waitFor();
  }, 60_000);

  it('when the event names are opened, then the recorded name is listed with its first-seen time', async () => {
    await page.getByRole('link', { name: 'Event names' }).click();
    await page.getByRole('cell', { name: 'Console Live Event' }).waitFor();
    await screenshot('event-names');
  }, 60_000);

  it('when a Contact is looked up by email, then its GDPR export downloads with its Event, and its erasure needs its email typed', async () => {
    await page.getByRole('link', { name: 'Contacts' }).click();
    await page.getByLabel('External id, email or contact id').fill(contact.email.toUpperCase());
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByText(contact.id).waitFor();
    await page.getByRole('button', { name: 'Prepare GDPR export' }).click();
    const link = page.getByRole('link', { name: /Download contact-/ });
    await link.waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const file = path.join(outputDir, download.suggestedFilename());
    await download.saveAs(file);
    const lines = fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines[0]).toMatchObject({ type: 'contact' });
    expect(lines.filter((l) => l.type === 'event').length).toBeGreaterThanOrEqual(1);
    await screenshot('contacts', 'Find');

    await page.getByRole('button', { name: 'Erase…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Erase this contact?' });
    await dialog.getByLabel(/Type .* to confirm/).fill(contact.email);
    await dialog.getByRole('button', { name: 'Erase contact' }).click();
    await page.getByText(`Contact ${contact.id} and its events were erased.`).waitFor();
    const read = await call('GET', `/v1/contacts/by-id/${contact.id}`, token);
    expect(read.status).toBe(404);
  }, 60_000);

  it('when the API refuses the token (401), then the console returns to sign-in saying so', async () => {
    await page.evaluate(() => sessionStorage.setItem('herald.console.adminToken', 'expired'));
    await page.getByRole('link', { name: 'Event names' }).click();
    await page.getByText('The admin token was refused: sign in again.').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.getByLabel('Admin token').fill(adminToken());
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }, 60_000);

  it('when signed out, then the token is gone from the tab and the sign-in page shows', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('Signed out.').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect((await context.cookies()).length).toBe(0);
  }, 60_000);

  it('when everything is done, then the admin token appeared in no URL, no cookie and no service log, and the page broke no CSP rule', async () => {
    const admin = adminToken();
    expect(
      requested.filter((u) => u.includes(admin) || u.includes(encodeURIComponent(admin))),
    ).toEqual([]);
    expect(logged.filter((l) => /Content Security Policy/i.test(l))).toEqual([]);
    const logs = path.join(dataDir, 'logs');
    for (const name of fs.readdirSync(logs).filter((f) => f.endsWith('.log'))) {
      const file = path.join(logs, name);
      if (fs.statSync(file).mtimeMs < startedAt - 60_000) continue;
      expect([name, fs.readFileSync(file, 'utf8').includes(admin)]).toEqual([name, false]);
    }
  });
});
