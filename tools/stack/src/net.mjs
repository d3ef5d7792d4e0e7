// Network helpers for the local stack: TCP probes, free ports and a minimal HTTP client. Node
// built-ins only.
import http from 'node:http';
import net from 'node:net';
import { StackError } from './output.mjs';

/** Resolves true when something accepts a TCP connection on host:port. */
export function tcpProbe(port, hostName = '127.0.0.1', timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: hostName });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Resolves true when we could bind host:port right now (nobody listens there). */
export function portFree(port, hostName = '127.0.0.1') {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: hostName, exclusive: true }, () =>
      server.close(() => resolve(true)),
    );
  });
}

/** A loopback port nobody listens on now (the kernel's pick). */
export function freePort(hostName = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: hostName }, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Fails with a clear message when a port we are about to use is taken by someone else. */
export async function assertPortFree(component, port, envVar) {
  if (await portFree(port)) return;
  throw new StackError(
    component,
    `port ${port} on 127.0.0.1 is already in use by another process (not one this stack started). ` +
      `Stop that process, or pick another port with ${envVar}=<port>.`,
  );
}

/**
 * Minimal HTTP request: resolves {status, headers, body}.
 * @param {string | URL} url
 * @param {{ method?: string, headers?: import('node:http').OutgoingHttpHeaders,
 *   body?: string | Buffer, timeoutMs?: number }} [options]
 * @returns {Promise<{ status: number, headers: import('node:http').IncomingHttpHeaders,
 *   body: string }>}
 */
export function httpRequest(url, { method = 'GET', headers = {}, body, timeoutMs = 2000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
