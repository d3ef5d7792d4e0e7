// No log of the local stack holds a Contact's externalId or email: not the ingress's access or
// error log, not the services' request logs, not PostgreSQL's, Kafka's, Redis's, Prometheus's
// or the trace receiver's, nor the spans it stores. A Contact is taken through everything a
// customer does with one through the ingress (paths, a query string, a body too large, a path
// refused, Events by email and by externalId, an Event for an unknown email, export, erasure),
// then every log is read from where it ended before the first request.
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { accessToken, call, dataDir, newTenant, repoRoot, runCommand } from './support.js';

const logDir = path.join(dataDir, 'logs');
const spansFile = path.join(dataDir, 'traces', 'spans.jsonl');

/**
 * Every log file of the stack: those `npm run stack -- status --json` names for each component,
 * every file in .herald/logs, and the trace receiver's spans.
 */
async function stackLogFiles(): Promise<string[]> {
  const run = await runCommand(process.execPath, [
    path.join(repoRoot, 'tools', 'stack', 'src', 'cli.mjs'),
    'status',
    '--json',
  ]);
  const rows = JSON.parse(run.stdout) as { logFile?: string; extraLogs?: string[] }[];
  const named = rows.flatMap((row) => [row.logFile ?? [], row.extraLogs ?? []].flat());
  expect(named.length).toBeGreaterThan(10);
  const inLogDir = readdirSync(logDir).map((name) => path.join(logDir, name));
  return [...new Set([...named, ...inLogDir, spansFile])].filter(
    (file) => existsSync(file) && statSync(file).isFile(),
  );
}

const sizeOf = (file: string) => (existsSync(file) ? statSync(file).size : 0);

/** What `file` holds past byte `from` (all of it if it was rotated since). */
function textSince(file: string, from: number): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const start = size < from ? 0 : from;
    const buffer = Buffer.alloc(size - start);
    const read = readSync(fd, buffer, 0, buffer.length, start);
    return buffer.toString('utf8', 0, read);
  } finally {
    closeSync(fd);
  }
}

(existsSync(logDir) ? describe : describe.skip)('the logs of the local stack', () => {
  it('when a Contact is written, read, given Events, exported and erased through the ingress, then no log holds its externalId or email, raw or percent-encoded', async () => {
    // `unique` is in every externalId and email below and in nothing else sent, so a log that
    // holds any of them in any encoding holds it.
    const unique = randomUUID().replace(/-/g, '');
    const externalId = `logs/probe.${unique}`;
    const email = `probe.${unique}@example.com`;
    // An email as an externalId: `/v1/contacts/<email>`.
    const emailAsExternalId = `mail+${unique}@example.com`;
    const otherEmail = `other.${unique}@example.com`;
    const unknownEmail = `nobody.${unique}@example.com`;
    const byExternalId = `/v1/contacts/${encodeURIComponent(externalId)}`;
    const byEmailAsExternalId = `/v1/contacts/${encodeURIComponent(emailAsExternalId)}`;

    const tenantId = await newTenant('Log privacy');
    const token = await accessToken(tenantId, [
      'contacts:read',
      'contacts:write',
      'contacts:export',
      'contacts:erase',
      'events:write',
    ]);
    const files = await stackLogFiles();
    const from = new Map(files.map((file) => [file, sizeOf(file)]));

    // One sampled trace for the whole story, so that its spans are stored (and read) too.
    const traceId = randomUUID().replace(/-/g, '');
    const requestIds: string[] = [];
    /** `body`: JSON, or a string sent as it is. */
    const request = async (method: string, route: string, body?: unknown) => {
      const requestId = `e2e-log-privacy-${randomUUID()}`;
      requestIds.push(requestId);
      const spanId = randomUUID().replace(/-/g, '').slice(0, 16);
      const headers = { 'x-request-id': requestId, traceparent: `00-${traceId}-${spanId}-01` };
      const res =
        typeof body === 'string'
          ? await call(method, route, token, undefined, {
              headers: { ...headers, 'content-type': 'application/json' },
              body,
            })
          : await call(method, route, token, body, { headers });
      return { status: res.status, body: await res.text() };
    };
    const event = (identity: Record<string, string>) => ({
      ...identity,
      eventName: 'Log Probe',
      occurredAt: new Date().toISOString(),
      dedupKey: `dk-${randomUUID()}`,
    });

    expect((await request('PUT', byExternalId, { email, name: 'Probe' })).status).toBe(201);
    expect((await request('GET', byExternalId)).status).toBe(200);
    expect(
      (await request('GET', `${byExternalId}?email=${encodeURIComponent(email)}`)).status,
    ).toBe(200);
    expect((await request('POST', '/v1/contacts', { email, name: 'Probe again' })).status).toBe(
      200,
    );
    expect((await request('PUT', byEmailAsExternalId, { email: otherEmail })).status).toBe(201);
    expect((await request('GET', byEmailAsExternalId)).status).toBe(200);
    // the email of the one Contact, claimed for the other: 409
    expect((await request('PUT', byEmailAsExternalId, { email })).status).toBe(409);
    const byEmail = await request('POST', '/v1/events/by-email', event({ contactEmail: email }));
    expect(byEmail.status).toBe(202);
    const byExt = await request(
      'POST',
      '/v1/events/by-external-id',
      event({ contactExternalId: externalId }),
    );
    expect(byExt.status).toBe(202);
    const unknown = await request(
      'POST',
      '/v1/events/by-email',
      event({ contactEmail: unknownEmail }),
    );
    expect(unknown.status).toBe(422);
    // nginx's own answers: a body over 1 MiB, a path with a dot-segment, a path nothing serves
    const tooLarge = JSON.stringify({ email, filler: 'x'.repeat(1_100_000) });
    expect((await request('PUT', byExternalId, tooLarge)).status).toBe(413);
    expect((await request('PUT', `${byExternalId}%2F..`, { email })).status).toBe(400);
    expect((await request('GET', `/v1/contact/${encodeURIComponent(email)}`)).status).toBe(404);
    const exported = await request('GET', `${byExternalId}/export`);
    expect(exported.status).toBe(200);
    expect(exported.body).toContain(email);
    expect((await request('GET', `${byEmailAsExternalId}/export`)).status).toBe(200);
    expect((await request('POST', `${byExternalId}/erase`)).status).toBe(204);
    expect((await request('POST', `${byEmailAsExternalId}/erase`)).status).toBe(204);
    expect((await request('GET', byExternalId)).status).toBe(404);

    // nginx logs each request after answering it, the services theirs when the answer is sent:
    // wait for every request's line in the access log, then give the other logs (and the spans,
    // exported in batches) a few seconds more.
    const accessLog = path.join(logDir, 'nginx-access.log');
    const deadline = Date.now() + 15_000;
    let accessLines: Record<string, unknown>[] = [];
    for (;;) {
      accessLines = textSince(accessLog, from.get(accessLog) ?? 0)
        .split('\n')
        .filter((line) => line.includes('"request_id":"e2e-log-privacy-'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const logged = new Set(accessLines.map((line) => line.request_id));
      if (requestIds.every((id) => logged.has(id))) break;
      if (Date.now() > deadline) throw new Error('the access log misses some of the requests');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 6_000));

    const needle = unique.toLowerCase();
    const found = files.flatMap((file) =>
      textSince(file, from.get(file) ?? 0)
        .split('\n')
        .filter((line) => line.toLowerCase().includes(needle))
        .map((line) => `${path.relative(repoRoot, file)}: ${line.slice(0, 400)}`),
    );
    expect(found).toEqual([]);

    // The access log names each request by its route's pattern.
    const routes = accessLines
      .filter((line) => requestIds.includes(String(line.request_id)))
      .map((line) => line.route);
    expect(routes).toEqual(
      expect.arrayContaining([
        '/v1/contacts/:externalId',
        '/v1/contacts',
        '/v1/events/by-email',
        '/v1/events/by-external-id',
        '/v1/contacts/:externalId/export',
        '/v1/contacts/:externalId/erase',
        '-',
      ]),
    );
    expect(accessLines.every((line) => !('uri' in line))).toBe(true);
  }, 60_000);
});
