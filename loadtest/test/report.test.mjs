// The pictures of a k6 run: the HTML report k6 exports (opened in Debian's Chromium through
// playwright-core) and the PNG of throughput and latency per second. k6 runs a few seconds
// against a local HTTP server made here; no stack. Run: node --test loadtest/test/
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { htmlReportEnv, timeSeries, writeTimeSeriesPng } from '../report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');

async function k6Binary() {
  if (process.env.K6_BINARY) return process.env.K6_BINARY;
  const { ensureGoTool } = await import('@herald/stack/go-tools.mjs');
  return ensureGoTool('k6');
}

test('a k6 run writes an HTML report that renders, and a chart of its seconds', async () => {
  const server = http.createServer((req, res) => {
    setTimeout(() => res.end('{}'), 2 + Math.random() * 8);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-k6-report-'));
  const script = path.join(dir, 'script.js');
  fs.writeFileSync(
    script,
    `import http from 'k6/http';
export const options = { vus: 4, duration: '4s' };
export default function () { http.get(__ENV.TARGET); }
`,
  );
  const html = path.join(dir, 'report.html');
  const csv = path.join(dir, 'points.csv');
  try {
    const k6 = await k6Binary();
    const code = await new Promise((resolve, reject) => {
      const child = spawn(
        k6,
        ['run', '--no-usage-report', '--quiet', '--out', `csv=${csv}`, script],
        {
          stdio: 'ignore',
          env: {
            ...process.env,
            ...htmlReportEnv(html),
            TARGET: `http://127.0.0.1:${server.address().port}/`,
            K6_NO_USAGE_REPORT: 'true',
          },
        },
      );
      child.on('error', reject);
      child.on('exit', resolve);
    });
    assert.equal(code, 0);

    // The chart: every second of the run, and a picture that is not blank.
    const series = await timeSeries(csv);
    assert.ok(series.length >= 3, `seconds: ${series.length}`);
    assert.ok(series.every((s) => s.requests > 0 && s.p50 > 0 && s.p99 >= s.p50));
    const png = path.join(dir, 'chart.png');
    await writeTimeSeriesPng(csv, png, 'test');
    assert.ok(fs.statSync(png).size > 10_000, 'the chart looks blank');

    // The HTML report, rendered by a real browser: its charts drawn, k6's figures on it.
    const executablePath = execFileSync(
      'node',
      [path.join(repoRoot, 'tools', 'stack', 'src', 'browser.mjs')],
      {
        encoding: 'utf8',
      },
    )
      .trim()
      .split('\n')
      .at(-1);
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`file://${html}`, { waitUntil: 'load' });
      await page.waitForSelector('canvas, svg', { timeout: 30_000 });
      const text = await page.textContent('body');
      assert.match(text ?? '', /http_req_duration|Request Duration/i);
      const shot = path.join(repoRoot, '.herald', 'test-output', 'k6-report.png');
      fs.mkdirSync(path.dirname(shot), { recursive: true });
      await page.screenshot({ path: shot, fullPage: false });
      assert.ok(fs.statSync(shot).size > 30_000, 'the report page looks blank');
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  } finally {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
