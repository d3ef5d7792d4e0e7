import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { main } from '../src/cli.js';

export interface RecordedRequest {
  method: string;
  /** The raw path as sent, percent-encoding kept. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface CannedAnswer {
  status: number;
  body?: unknown;
  /** Sent as is instead of JSON. */
  text?: string;
  headers?: Record<string, string>;
}

/** A stand-in for the operator API: records every request and answers the canned answer. */
export interface FakeApi {
  url: string;
  requests: RecordedRequest[];
  answer: CannedAnswer;
  close(): Promise<void>;
}

export async function startFakeApi(): Promise<FakeApi> {
  const api: FakeApi = {
    url: '',
    requests: [],
    answer: { status: 200, body: {} },
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      api.requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const { status, body, text, headers } = api.answer;
      const payload = text ?? (body === undefined ? '' : JSON.stringify(body));
      res.writeHead(status, {
        ...(text === undefined && body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      });
      res.end(payload);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return api;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process, as the bin would, with only the given environment. */
export async function run(argv: string[], env: Record<string, string | undefined>): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, env, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}

export const TENANT = '3f2c1d8e-1111-4222-8333-944455556666';
export const ADMIN_TOKEN = 'test-admin-token-0123456789';
