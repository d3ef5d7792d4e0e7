// Kafka's wire protocol from Node, just enough for the local stack: one Metadata request (v12,
// flexible versions) shows the brokers and the topics, so a readiness check or a topic listing
// starts no JVM. Node built-ins only.
import net from 'node:net';
import { host, ports } from './config.mjs';

/** Reads a response's fields in order. */
class Reader {
  /** @param {Buffer} buf */
  constructor(buf) {
    this.b = buf;
    this.o = 0;
  }
  i8() {
    return this.b.readInt8(this.o++);
  }
  i16() {
    const v = this.b.readInt16BE(this.o);
    this.o += 2;
    return v;
  }
  i32() {
    const v = this.b.readInt32BE(this.o);
    this.o += 4;
    return v;
  }
  uvarint() {
    let v = 0;
    let shift = 0;
    let byte;
    do {
      byte = this.b[this.o++];
      v += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return v;
  }
  compactString() {
    const n = this.uvarint();
    if (n === 0) return null;
    const s = this.b.toString('utf8', this.o, this.o + n - 1);
    this.o += n - 1;
    return s;
  }
  /**
   * @template T
   * @param {() => T} item
   * @returns {T[] | null}
   */
  compactArray(item) {
    const n = this.uvarint();
    if (n === 0) return null;
    const out = [];
    for (let i = 0; i < n - 1; i++) out.push(item());
    return out;
  }
  taggedFields() {
    const n = this.uvarint();
    for (let i = 0; i < n; i++) {
      this.uvarint();
      this.o += this.uvarint();
    }
  }
}

/** @param {number} correlationId */
function metadataRequest(correlationId) {
  const clientId = Buffer.from('herald-stack');
  const head = Buffer.alloc(10);
  head.writeInt16BE(3, 0); // api key: Metadata
  head.writeInt16BE(12, 2); // api version
  head.writeInt32BE(correlationId, 4);
  head.writeInt16BE(clientId.length, 8);
  // header tagged fields; topics = null (all); allow_auto_topic_creation; include_topic_authorized_operations; tagged fields
  const tail = Buffer.from([0, 0, 0, 0, 0]);
  const body = Buffer.concat([head, clientId, tail]);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return Buffer.concat([size, body]);
}

/**
 * @typedef {object} KafkaMetadata
 * @property {{ nodeId: number, host: string, port: number }[]} brokers
 * @property {string} clusterId
 * @property {number} controllerId
 * @property {{ name: string, errorCode: number, internal: boolean, partitions: number }[]} topics
 */

/**
 * @param {Buffer} buf
 * @param {number} correlationId
 * @returns {KafkaMetadata}
 */
function parseMetadata(buf, correlationId) {
  const r = new Reader(buf);
  if (r.i32() !== correlationId) throw new Error('kafka: unexpected correlation id');
  r.taggedFields();
  r.i32(); // throttle_time_ms
  const brokers = r.compactArray(() => {
    const b = { nodeId: r.i32(), host: r.compactString(), port: r.i32() };
    r.compactString(); // rack
    r.taggedFields();
    return b;
  });
  const clusterId = r.compactString();
  const controllerId = r.i32();
  const topics = r.compactArray(() => {
    const errorCode = r.i16();
    const name = r.compactString();
    r.o += 16; // topic id
    const internal = r.i8() !== 0;
    const partitions = r.compactArray(() => {
      r.i16();
      const index = r.i32();
      const leader = r.i32();
      r.i32();
      r.compactArray(() => r.i32());
      r.compactArray(() => r.i32());
      r.compactArray(() => r.i32());
      r.taggedFields();
      return { index, leader };
    });
    r.i32(); // topic_authorized_operations
    r.taggedFields();
    return { name, errorCode, internal, partitions: partitions?.length ?? 0 };
  });
  return { brokers: brokers ?? [], clusterId, controllerId, topics: topics ?? [] };
}

/**
 * One Metadata request to the broker: {brokers, clusterId, controllerId, topics}.
 * @returns {Promise<KafkaMetadata>}
 */
export function kafkaMetadata(port = ports.kafka, timeoutMs = 2000) {
  return new Promise((resolve, reject) => {
    const correlationId = (Math.random() * 0x7fffffff) | 0;
    const socket = net.connect({ host, port });
    let buf = Buffer.alloc(0);
    let settled = false;
    const finish = (fn, v) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      fn(v);
    };
    socket.setTimeout(timeoutMs, () => finish(reject, new Error('kafka: metadata timeout')));
    socket.once('connect', () => socket.write(metadataRequest(correlationId)));
    socket.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 4) return;
      const size = buf.readInt32BE(0);
      if (buf.length < 4 + size) return;
      try {
        finish(resolve, parseMetadata(buf.subarray(4, 4 + size), correlationId));
      } catch (err) {
        finish(reject, err);
      }
    });
    socket.once('end', () => finish(reject, new Error('kafka: connection closed')));
    socket.once('error', (err) => finish(reject, err));
  });
}

/** True when the broker answers a Metadata request and lists itself (accepts clients). */
export async function kafkaAnswers(timeoutMs = 2000, port = ports.kafka) {
  try {
    const md = await kafkaMetadata(port, timeoutMs);
    return md.brokers.length > 0 && md.controllerId >= 0;
  } catch {
    return false;
  }
}
