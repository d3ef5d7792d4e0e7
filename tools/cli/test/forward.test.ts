import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startForward } from '../src/forward/forward.js';
import { run } from './support.js';

// A stand-in for kubectl, narrow to what forward asks of it: `get services` lists the release's
// Services (auth, contacts and events: billing is disabled), and `port-forward service/<name>`
// serves HTTP on a free port, answering which Service it is, and ends after a request whose path
// has a segment "die" (its pod went away). It records every command line in a file.
const FAKE_KUBECTL = `#!${process.execPath}
const fs = require('node:fs');
const http = require('node:http');
const args = process.argv.slice(2);
fs.appendFileSync(process.env.FAKE_KUBECTL_LOG, JSON.stringify(args) + '\\n');
if (args.includes('get')) {
  const items = ['auth', 'contacts', 'events', 'events-relay'].map((c) => ({
    metadata: { name: 'rel-herald-' + c, labels: { 'app.kubernetes.io/component': c } },
  }));
  process.stdout.write(JSON.stringify({ items: process.env.FAKE_KUBECTL_EMPTY ? [] : items }));
} else if (args.includes('port-forward')) {
  const service = args.find((a) => a.startsWith('service/')).slice('service/'.length);
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ service, path: req.url }));
    if (req.url.includes('/die/')) setTimeout(() => process.exit(1), 10);
  });
  server.listen(0, '127.0.0.1', () => {
    console.log('Forwarding from 127.0.0.1:' + server.address().port + ' -> 8080');
  });
}
`;

let dir: string;
let env: Record<string, string>;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'herald-forward-'));
  const kubectl = path.join(dir, 'kubectl');
  writeFileSync(kubectl, FAKE_KUBECTL);
  chmodSync(kubectl, 0o755);
  env = { KUBECTL: kubectl, FAKE_KUBECTL_LOG: path.join(dir, 'log') };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: await res.json<Record<string, unknown>>() };
};

describe('forward', () => {
  it('when the release runs auth, contacts and events, then each operator route reaches its Service through one address, and billing answers 503', async () => {
    const lines: string[] = [];
    const forward = await startForward(
      { namespace: 'ops', release: 'rel', port: 0, context: 'prod' },
      env,
      (line) => lines.push(line),
    );
    try {
      expect([...forward.services]).toEqual([
        ['auth', 'rel-herald-auth'],
        ['contacts', 'rel-herald-contacts'],
        ['events', 'rel-herald-events'],
      ]);
      expect(await get(`${forward.url}/admin/v1/tenants/t1/event-retention`)).toEqual({
        status: 200,
        body: { service: 'rel-herald-auth', path: '/admin/v1/tenants/t1/event-retention' },
      });
      expect((await get(`${forward.url}/admin/v1/tenants/t1/organizations`)).body.service).toBe(
        'rel-herald-contacts',
      );
      expect((await get(`${forward.url}/admin/v1/tenants/t1/event-names`)).body.service).toBe(
        'rel-herald-events',
      );
      expect((await get(`${forward.url}/admin/v1/tenants/t1/billing`)).status).toBe(503);
      expect((await get(`${forward.url}/v1/contacts/x`)).status).toBe(404);
    } finally {
      await forward.close();
    }
    const calls = readFileSync(env.FAKE_KUBECTL_LOG as string, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as string[]);
    expect(calls[0]).toEqual([
      '--context',
      'prod',
      '--namespace',
      'ops',
      'get',
      'services',
      '--selector',
      'app.kubernetes.io/part-of=herald,app.kubernetes.io/instance=rel',
      '--output',
      'json',
    ]);
    expect(
      calls
        .slice(1)
        .map((c) => c.slice(4).join(' '))
        .sort(),
    ).toEqual([
      'port-forward --address 127.0.0.1 service/rel-herald-auth :http',
      'port-forward --address 127.0.0.1 service/rel-herald-contacts :http',
      'port-forward --address 127.0.0.1 service/rel-herald-events :http',
    ]);
  });

  it("when a Service's port-forward ends (its pod went away), then it is opened again and its routes answer once more", async () => {
    const lines: string[] = [];
    const forward = await startForward({ release: 'rel', port: 0 }, env, (l) => lines.push(l));
    try {
      const died = await fetch(`${forward.url}/admin/v1/tenants/die/event-names`);
      expect(died.status).toBe(200);
      for (let i = 0; i < 50 && !lines.some((l) => l.includes('forwarded again')); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(lines.join('\n')).toMatch(/events: the port-forward ended .*; opening it again/);
      expect(lines.join('\n')).toMatch(/events: forwarded again/);
      expect(await get(`${forward.url}/admin/v1/tenants/t1/event-names`)).toEqual({
        status: 200,
        body: { service: 'rel-herald-events', path: '/admin/v1/tenants/t1/event-names' },
      });
    } finally {
      await forward.close();
    }
  });

  it('when the namespace holds no Services of the release, then the command fails naming --namespace and --release', async () => {
    const result = await run(['forward', '--release', 'nope'], { ...env, FAKE_KUBECTL_EMPTY: '1' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no Services of the Helm release "nope".*--namespace.*--release/);
  });

  it('when kubectl cannot be run, then the command fails saying so', async () => {
    const result = await run(['forward'], { KUBECTL: path.join(dir, 'missing') });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/^error: cannot run .*missing/);
  });

  it('when it runs, then it prints the address to set as HERALD_URL and each Service it forwards', async () => {
    const result = await run(['forward', '--release', 'rel', '--port', '0'], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^Operator API of release "rel" \(kubectl's namespace\) on http:\/\/127\.0\.0\.1:\d+\n/,
    );
    expect(result.stdout).toMatch(/export HERALD_URL=http:\/\/127\.0\.0\.1:\d+/);
    expect(result.stdout).toContain('contacts  service/rel-herald-contacts');
  });

  it.each([
    [['forward', '--port', '70000'], /--port must be a TCP port/],
    [['forward', '--tenant', 't1'], /"forward" has no option --tenant/],
    [['forward', 'now'], /unexpected argument "now"/],
    [['forward', '--json'], /"forward" has no option --json/],
    [['tenants', 'create', '--name', 'a', '--namespace', 'x'], /has no option --namespace/],
  ])('when running %j, then it is a usage error and kubectl is not run', async (argv, message) => {
    const result = await run(argv, { KUBECTL: path.join(dir, 'missing') });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('when asking for its help, then its options and defaults are explained', async () => {
    for (const argv of [
      ['forward', '--help'],
      ['help', 'forward'],
    ]) {
      const result = await run(argv, {});
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(
        'forward [--namespace <namespace>] [--release <name>] [--port <port>] [--context <context>]',
      );
      expect(result.stdout).toContain('(default: 8081)');
    }
    expect((await run(['help'], {})).stdout).toContain('herald-admin forward --namespace herald');
  });
});
