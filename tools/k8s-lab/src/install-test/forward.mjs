// TCP forwarders from an address pods can reach (the node's end of the pod bridge) to the local
// stack's backends, which listen on 127.0.0.1 only. Kafka needs more than a byte pipe: its
// broker advertises 127.0.0.1:<port> in Metadata and FindCoordinator answers, and a client in a
// pod would then dial its own loopback. The Kafka forwarder rewrites that address in those two
// answers to the forwarder's own, so every later connection comes back through it too. Only
// their non-flexible versions are parsed, so the forwarder also lowers the newest version of
// each that the broker's ApiVersions answer offers: a client then asks in one of those.
import net from 'node:net';
import { ports } from '@herald/stack/config.mjs';

const METADATA = 3;
const FIND_COORDINATOR = 10;
const API_VERSIONS = 18;
/** The newest non-flexible version of each API whose answers carry broker addresses. */
const NEWEST_PARSED = new Map([
  [METADATA, 8],
  [FIND_COORDINATOR, 2],
]);

/** Reads an unsigned varint at `offset`: [value, next offset]. */
function readUnsignedVarint(buf, offset) {
  let value = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = buf[offset++];
    value |= (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [value, offset];
  }
}

/** The offset after the tagged fields at `offset` (a flexible version's TAG_BUFFER). */
function skipTaggedFields(buf, offset) {
  let count;
  [count, offset] = readUnsignedVarint(buf, offset);
  for (let i = 0; i < count; i += 1) {
    let size;
    [, offset] = readUnsignedVarint(buf, offset); // tag
    [size, offset] = readUnsignedVarint(buf, offset);
    offset += size;
  }
  return offset;
}

/**
 * An ApiVersions answer whose max_version of Metadata and FindCoordinator is at most what
 * rewriteResponse parses (changed in place: the frame keeps its size). Its header has no tagged
 * fields in any version; from v3 on its array is compact and each entry has tagged fields.
 * @param {Buffer} frame
 * @param {number} apiVersion
 * @returns {Buffer}
 */
export function capApiVersions(frame, apiVersion) {
  let offset = 8 + 2; // size, correlation id, error_code
  let count;
  if (apiVersion >= 3) {
    [count, offset] = readUnsignedVarint(frame, offset);
    count -= 1;
  } else {
    count = frame.readInt32BE(offset);
    offset += 4;
  }
  for (let i = 0; i < count; i += 1) {
    const newest = NEWEST_PARSED.get(frame.readInt16BE(offset));
    if (newest !== undefined && frame.readInt16BE(offset + 4) > newest) {
      frame.writeInt16BE(newest, offset + 4);
    }
    offset += 6;
    if (apiVersion >= 3) offset = skipTaggedFields(frame, offset);
  }
  return frame;
}

/** Complete size-prefixed Kafka frames out of `state.buffer`; the remainder stays. */
function takeFrames(state, chunk) {
  state.buffer = state.buffer.length ? Buffer.concat([state.buffer, chunk]) : chunk;
  const frames = [];
  while (state.buffer.length >= 4) {
    const size = state.buffer.readInt32BE(0);
    if (state.buffer.length < 4 + size) break;
    frames.push(state.buffer.subarray(0, 4 + size));
    state.buffer = state.buffer.subarray(4 + size);
  }
  return frames;
}

/** Reads a non-flexible (int16-length) string at `offset`: [value, next offset]. */
function readString(buf, offset) {
  const length = buf.readInt16BE(offset);
  if (length < 0) return [null, offset + 2];
  return [buf.toString('utf8', offset + 2, offset + 2 + length), offset + 2 + length];
}

/** The frame with the host string at `offset` replaced by `host`, the size fixed. */
function replaceHost(frame, offset, host) {
  const [, end] = readString(frame, offset);
  const encoded = Buffer.from(host, 'utf8');
  const length = Buffer.alloc(2);
  length.writeInt16BE(encoded.length);
  const out = Buffer.concat([frame.subarray(0, offset), length, encoded, frame.subarray(end)]);
  out.writeInt32BE(out.length - 4, 0);
  return out;
}

/**
 * A response frame with every broker host equal to `from` replaced by `to`. Only the
 * non-flexible versions are parsed (Metadata up to v8, FindCoordinator up to v2: all that a
 * client asks for once capApiVersions lowered what the broker offers); a flexible one is passed
 * on unchanged and reported.
 * @param {Buffer} frame
 * @param {{ apiKey: number, apiVersion: number }} request the request's header
 * @param {string} from
 * @param {string} to
 * @param {(message: string) => void} [warn]
 * @returns {Buffer}
 */
export function rewriteResponse(frame, request, from, to, warn = () => {}) {
  if (request.apiKey === API_VERSIONS) return capApiVersions(frame, request.apiVersion);
  // frame: int32 size, int32 correlation id, then the body
  let offset = 8;
  if (request.apiKey === METADATA) {
    if (request.apiVersion > 8) {
      warn(`Metadata v${request.apiVersion} is flexible: its broker addresses are not rewritten`);
      return frame;
    }
    if (request.apiVersion >= 3) offset += 4; // throttle_time_ms
    const brokers = frame.readInt32BE(offset);
    offset += 4;
    for (let i = 0; i < brokers; i += 1) {
      offset += 4; // node_id
      const [host] = readString(frame, offset);
      if (host === from) frame = replaceHost(frame, offset, to);
      [, offset] = readString(frame, offset);
      offset += 4; // port
      if (request.apiVersion >= 1) [, offset] = readString(frame, offset); // rack
    }
    return frame;
  }
  if (request.apiKey === FIND_COORDINATOR) {
    if (request.apiVersion > 2) {
      warn(`FindCoordinator v${request.apiVersion} is flexible: its address is not rewritten`);
      return frame;
    }
    if (request.apiVersion >= 1) {
      offset += 4 + 2; // throttle_time_ms, error_code
      [, offset] = readString(frame, offset); // error_message
    } else {
      offset += 2; // error_code
    }
    offset += 4; // node_id
    const [host] = readString(frame, offset);
    return host === from ? replaceHost(frame, offset, to) : frame;
  }
  return frame;
}

function pipeKafka(client, upstream, { from, to, warn }) {
  const pending = new Map(); // correlation id -> request header
  const requests = { buffer: Buffer.alloc(0) };
  const responses = { buffer: Buffer.alloc(0) };
  client.on('data', (chunk) => {
    for (const frame of takeFrames(requests, chunk)) {
      const apiKey = frame.readInt16BE(4);
      if (apiKey === METADATA || apiKey === FIND_COORDINATOR || apiKey === API_VERSIONS) {
        pending.set(frame.readInt32BE(8), { apiKey, apiVersion: frame.readInt16BE(6) });
      }
      upstream.write(frame);
    }
  });
  upstream.on('data', (chunk) => {
    for (let frame of takeFrames(responses, chunk)) {
      const correlationId = frame.readInt32BE(4);
      const request = pending.get(correlationId);
      if (request) {
        pending.delete(correlationId);
        frame = rewriteResponse(Buffer.from(frame), request, from, to, warn);
      }
      client.write(frame);
    }
  });
}

/**
 * Starts one forwarder: `listen` {host, port} to `target` {host, port}. With `kafka`, the
 * broker address `target` is rewritten to `listen` in Metadata and FindCoordinator answers.
 * Resolves to { close(), connections() }.
 * @param {{ listen: Address, target: Address, kafka?: boolean,
 *   warn?: (message: string) => void }} options
 * @returns {Promise<{ connections: () => number, close: () => Promise<void> }>}
 */
/** @typedef {{ host: string, port: number }} Address */

export function startForwarder({ listen, target, kafka = false, warn = () => {} }) {
  let count = 0;
  const sockets = new Set();
  const server = net.createServer((client) => {
    count += 1;
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {}); // the other side's close ends both
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    if (kafka) {
      pipeKafka(client, upstream, { from: target.host, to: listen.host, warn });
    } else {
      client.pipe(upstream);
      upstream.pipe(client);
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve({
        connections: () => count,
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/**
 * The forwarders from `host` (the pod bridge) to the stack's PostgreSQL, Redis and Kafka, each
 * added to `forwarders` once it listens, so that a failure part way leaves the started ones to
 * be closed.
 * @param {string} host
 * @param {{ close: () => Promise<void> }[]} forwarders
 */
export async function forwardStackBackends(host, forwarders) {
  const to = (/** @type {number} */ port) => ({
    listen: { host, port },
    target: { host: '127.0.0.1', port },
  });
  forwarders.push(await startForwarder(to(ports.postgres)));
  forwarders.push(await startForwarder(to(ports.redis)));
  forwarders.push(
    await startForwarder({
      ...to(ports.kafka),
      kafka: true,
      warn: (m) => console.log(`  kafka forwarder: ${m}`),
    }),
  );
}
