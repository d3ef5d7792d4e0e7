// What the service logger writes when a request fails with a database error: the shared error
// handler logs the error it caught, and createLogger decides what of it reaches the line.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { createHttpApp, createLogger, startServer, type RunningServer } from '../../src/index.js';

/** Shaped like pg's DatabaseError for a unique violation: its detail quotes the row. */
class DatabaseError extends Error {
  severity = 'ERROR';
  code = '23505';
  detail = 'Key (email)=(a@b.example) already exists.';
  hint = 'Contact a@b.example exists already.';
  where = 'SQL statement "insert into contacts (email) values (\'a@b.example\')"';
  parameters = ['a@b.example'];
  schema = 'public';
  table = 'contacts';
  constraint = 'contacts_tenant_email_key';
  routine = '_bt_check_unique';
}

const lines: string[] = [];
const logger = createLogger({
  service: 'error-log-test',
  destination: new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  }),
});

let running: RunningServer;
beforeAll(async () => {
  const app = createHttpApp({
    logger,
    routes: (app) => {
      app.post('/v1/contacts', () => {
        throw new DatabaseError('duplicate key value violates unique constraint, for a@b.example');
      });
    },
  });
  running = await startServer(app, { host: '127.0.0.1', port: 0, logger, shutdownTimeoutMs: 2000 });
});
afterAll(() => running.close());

describe('logging a request that failed with a database error', () => {
  it('when the error quotes an email, then the log has its code, constraint and frames but not the email', async () => {
    const res = await fetch(`${running.url}/v1/contacts`, {
      method: 'POST',
      headers: { 'x-request-id': 'dup-1' },
    });
    expect(res.status).toBe(500);
    await new Promise((r) => setTimeout(r, 20));

    const failed = lines
      .map((l) => JSON.parse(l) as { msg?: string; requestId?: string; err?: unknown })
      .find((l) => l.msg === 'request failed');
    expect(failed?.requestId).toBe('dup-1');
    expect(failed?.err).toEqual({
      type: 'DatabaseError',
      code: '23505',
      constraint: 'contacts_tenant_email_key',
      routine: '_bt_check_unique',
      stack: expect.stringMatching(/^ {4}at /),
    });
    expect(lines.join('')).not.toContain('a@b.example');
  });
});
