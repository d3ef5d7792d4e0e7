// A DNS client for one question, enough to ask CoreDNS for a Service's address from the node:
// the message encoding is pure (unit tested), `resolveA` sends it over UDP.
import dgram from 'node:dgram';

/** A standard query (recursion desired) for the A records of `name`. */
export function encodeQuery(name, id) {
  const labels = name.replace(/\.$/, '').split('.');
  const parts = [Buffer.from([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0])];
  for (const label of labels) {
    if (label.length === 0 || label.length > 63) throw new Error(`bad DNS name ${name}`);
    parts.push(Buffer.from([label.length]), Buffer.from(label, 'ascii'));
  }
  parts.push(Buffer.from([0, 0, 1, 0, 1])); // root, QTYPE A, QCLASS IN
  return Buffer.concat(parts);
}

function skipName(buf, offset) {
  for (;;) {
    const len = buf[offset];
    if (len === undefined) throw new Error('truncated DNS message');
    if ((len & 0xc0) === 0xc0) return offset + 2; // compression pointer ends the name
    if (len === 0) return offset + 1;
    offset += 1 + len;
  }
}

const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

/** `{ id, rcode, addresses }` of a response: the A records of its answer section. */
export function decodeResponse(buf) {
  if (buf.length < 12) throw new Error('truncated DNS message');
  const id = buf.readUInt16BE(0);
  const rcode = RCODES[buf[3] & 0x0f] ?? `RCODE${buf[3] & 0x0f}`;
  const qd = buf.readUInt16BE(4);
  const an = buf.readUInt16BE(6);
  let offset = 12;
  for (let i = 0; i < qd; i++) offset = skipName(buf, offset) + 4;
  const addresses = [];
  for (let i = 0; i < an; i++) {
    offset = skipName(buf, offset);
    const type = buf.readUInt16BE(offset);
    const length = buf.readUInt16BE(offset + 8);
    const data = buf.subarray(offset + 10, offset + 10 + length);
    if (type === 1 && length === 4) addresses.push([...data].join('.'));
    offset += 10 + length;
  }
  return { id, rcode, addresses };
}

/** Asks `server` (port 53) for the A records of `name`; resolves `{ rcode, addresses }`. */
export function resolveA(server, name, { port = 53, timeoutMs = 2000 } = {}) {
  const id = Math.floor(Math.random() * 0xffff);
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no DNS answer from ${server}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('message', (msg) => {
      let answer;
      try {
        answer = decodeResponse(msg);
      } catch {
        return;
      }
      if (answer.id !== id) return;
      clearTimeout(timer);
      socket.close();
      resolve(answer);
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      socket.close();
      reject(err);
    });
    socket.send(encodeQuery(name, id), port, server);
  });
}
