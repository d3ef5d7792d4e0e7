#!/usr/bin/env node
// The local stack's trace receiver: a small OTLP/HTTP server that appends every span it is sent
// to a file, one JSON object a line, for `npm run stack -- traces` and the tests to read. Node
// built-ins only, like the rest of the stack: the protobuf the SDK's default exporter sends
// (`http/protobuf`) is decoded by hand (otlp-decode.mjs), and OTLP/JSON (`http/json`) too.
//
//   node tools/stack/src/trace-receiver.mjs --port 14318 --out .herald/traces/spans.jsonl
//
// POST /v1/traces (application/x-protobuf or application/json, gzip or deflate allowed) answers
// an empty ExportTraceServiceResponse; GET /healthz answers 200. Loopback only: whatever it is
// sent is written as is.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { KINDS, decodeTraces } from './otlp-decode.mjs';

/** A request body larger than this is refused (413); the SDK's batches are far smaller. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** The file is moved to `<file>.1` (replacing an older one) when it grows past this. */
const ROTATE_BYTES = 64 * 1024 * 1024;

const STATUS = ['UNSET', 'OK', 'ERROR'];

// ---------------------------------------------------------------------------------------------
// Output

const nanosToIso = (nanos) => new Date(Number(BigInt(nanos) / 1000000n)).toISOString();

/** The line written for one span: what `traces` and the tests read. */
export function spanRecord({ resource, scope, span }, receivedAt = new Date()) {
  const start = BigInt(span.startTimeUnixNano);
  const end = BigInt(span.endTimeUnixNano);
  const code = typeof span.status.code === 'number' ? span.status.code : 0;
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    name: span.name,
    kind: KINDS[span.kind] ?? String(span.kind),
    service: resource['service.name'] ?? null,
    scope: scope.name,
    start: nanosToIso(span.startTimeUnixNano),
    startTimeUnixNano: span.startTimeUnixNano,
    endTimeUnixNano: span.endTimeUnixNano,
    durationMs: Number(end - start) / 1e6,
    status: {
      code: STATUS[code] ?? String(code),
      ...(span.status.message ? { message: span.status.message } : {}),
    },
    attributes: span.attributes,
    links: span.links,
    events: span.events,
    receivedAt: receivedAt.toISOString(),
  };
}

class SpanFile {
  constructor(file) {
    this.file = file;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.open();
  }
  open() {
    this.fd = fs.openSync(this.file, 'a');
    this.size = fs.fstatSync(this.fd).size;
  }
  append(lines) {
    if (lines.length === 0) return;
    if (this.size >= ROTATE_BYTES) {
      fs.closeSync(this.fd);
      fs.renameSync(this.file, `${this.file}.1`);
      this.open();
    }
    const data = Buffer.from(lines.map((l) => `${l}\n`).join(''));
    fs.writeSync(this.fd, data);
    this.size += data.length;
  }
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(Object.assign(new Error('request body too large'), { status: 413 }));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function inflate(body, encoding) {
  switch ((encoding ?? 'identity').toLowerCase()) {
    case 'gzip':
      return zlib.gunzipSync(body);
    case 'deflate':
      return zlib.inflateSync(body);
    case 'identity':
      return body;
    default:
      throw Object.assign(new Error(`unsupported Content-Encoding ${encoding}`), { status: 415 });
  }
}

export function createReceiver(out) {
  const spans = new SpanFile(out);
  let received = 0;
  return http.createServer(async (req, res) => {
    const url = req.url?.split('?', 1)[0];
    const answer = (status, contentType, body) => {
      res.writeHead(status, { 'content-type': contentType, 'content-length': body.length });
      res.end(body);
    };
    if (req.method === 'GET' && url === '/healthz') {
      answer(200, 'application/json', Buffer.from(JSON.stringify({ status: 'ok', received })));
      return;
    }
    if (url !== '/v1/traces') {
      answer(404, 'text/plain', Buffer.from('only POST /v1/traces (OTLP/HTTP) is served here\n'));
      return;
    }
    if (req.method !== 'POST') {
      answer(405, 'text/plain', Buffer.from('POST only\n'));
      return;
    }
    const contentType = req.headers['content-type'] ?? '';
    const json = /json/i.test(contentType);
    try {
      const body = inflate(await readBody(req), req.headers['content-encoding']);
      const now = new Date();
      const decoded = decodeTraces(body, contentType);
      spans.append(decoded.map((s) => JSON.stringify(spanRecord(s, now))));
      received += decoded.length;
      // ExportTraceServiceResponse with no partial_success: an empty message.
      answer(
        200,
        json ? 'application/json' : 'application/x-protobuf',
        Buffer.from(json ? '{}' : ''),
      );
    } catch (err) {
      const status = err.status ?? 400;
      process.stderr.write(`${new Date().toISOString()} ${status}: ${err.message}\n`);
      answer(status, 'text/plain', Buffer.from(`${err.message}\n`));
    }
  });
}

const isMain =
  process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const { values } = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string' },
      out: { type: 'string' },
    },
  });
  if (!values.port || !values.out) {
    process.stderr.write(
      'usage: trace-receiver.mjs --port <port> --out <file> [--host 127.0.0.1]\n',
    );
    process.exit(2);
  }
  const server = createReceiver(path.resolve(values.out));
  server.listen({ host: values.host, port: Number(values.port) }, () => {
    process.stdout.write(
      `${new Date().toISOString()} trace receiver on http://${values.host}:${values.port}/v1/traces, writing ${values.out}\n`,
    );
  });
  const stop = () => {
    server.close(() => process.exit(0));
    // An exporter's keep-alive connection may stay open: do not wait for it.
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
