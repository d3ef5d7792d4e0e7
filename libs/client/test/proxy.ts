// A small HTTP-aware TCP proxy (node:net) in front of the ingress, for the faults a client meets
// on the way: it reads each request, lets the test decide, and then forwards it (relaying the
// real answer), forwards it but drops the connection once the answer starts (so the service
// committed and the client never hears of it), holds the real answer past the client's timeout,
// or answers by itself (a 429 or 401 storm). One request per connection: forwarded requests go
// upstream with `Connection: close`, and the client sees that header in every answer. What the
// client receives through it is contract-checked (test/contract-check.ts), its own answers too.
import net from 'node:net';
import { checkAnswersFrom } from '@herald/testing';

export interface ProxiedRequest {
  /** 0-based, in arrival order. */
  index: number;
  method: string;
  path: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
}

export type Decision =
  | { action: 'forward' }
  /** Forward, wait for the first byte of the answer, then reset the client's connection. */
  | { action: 'drop-after-answer' }
  /** Forward, and relay the answer only after `ms` (past the client's timeout). */
  | { action: 'delay-answer'; ms: number }
  | { action: 'answer'; status: number; headers?: Record<string, string>; body?: unknown };

export interface Handled extends ProxiedRequest {
  decision: Decision['action'];
  /** The upstream answer's status, when the request was forwarded and answered. */
  upstreamStatus?: number;
}

export interface Proxy {
  url: string;
  /** Every request seen, in arrival order, with what was done with it. */
  handled: Handled[];
  close(): Promise<void>;
}

const STATUS_TEXT: Record<number, string> = {
  401: 'Unauthorized',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export async function startProxy(
  upstreamUrl: string,
  decide: (request: ProxiedRequest) => Decision,
  /** The loopback address to reach the ingress from (it is the client address Herald sees). */
  localAddress?: string,
): Promise<Proxy> {
  const upstream = new URL(upstreamUrl);
  const upstreamPort = Number(upstream.port || 80);
  // The stack listens on IPv4 loopback; `localhost` might resolve to ::1 first.
  const upstreamHost = upstream.hostname === 'localhost' ? '127.0.0.1' : upstream.hostname;
  const handled: Handled[] = [];
  const sockets = new Set<net.Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };

  const server = net.createServer((client) => {
    track(client);
    client.on('error', () => {});
    let buffered = Buffer.alloc(0);
    let started = false;
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const headEnd = buffered.indexOf('\r\n\r\n');
      if (headEnd < 0 || started) return;
      const head = buffered.subarray(0, headEnd).toString('latin1');
      const [requestLine, ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      if (headers['transfer-encoding']) {
        // The client sends Content-Length bodies; anything else is not this proxy's business.
        client.destroy();
        return;
      }
      const length = Number(headers['content-length'] ?? 0);
      if (buffered.length < headEnd + 4 + length) return;
      started = true;
      client.off('data', onData);
      const [method = '', path = ''] = requestLine!.split(' ');
      const request: ProxiedRequest = {
        index: handled.length,
        method,
        path,
        headers,
        body: buffered.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8'),
      };
      const decision = decide(request);
      const record: Handled = { ...request, decision: decision.action };
      handled.push(record);
      if (decision.action === 'answer') {
        answerDirectly(client, decision);
        return;
      }
      // Upstream, one request per connection: the answer ends when nginx closes it.
      const rewritten = [
        requestLine,
        ...lines.filter((line) => !/^(connection|keep-alive)\s*:/i.test(line)),
        'Connection: close',
        '',
        '',
      ].join('\r\n');
      const server = net.connect({ port: upstreamPort, host: upstreamHost, localAddress });
      track(server);
      server.on('error', () => client.destroy());
      server.write(rewritten);
      server.write(buffered.subarray(headEnd + 4, headEnd + 4 + length));
      let first = true;
      const held: Buffer[] = [];
      let releaseAt: number | undefined;
      server.on('data', (answer: Buffer) => {
        if (first) {
          first = false;
          record.upstreamStatus = Number(
            /^HTTP\/1\.[01] (\d{3})/.exec(answer.toString('latin1'))?.[1],
          );
          if (decision.action === 'drop-after-answer') {
            // The service has answered, so it committed; the client never hears of it.
            client.resetAndDestroy();
            server.destroy();
            return;
          }
          if (decision.action === 'delay-answer') releaseAt = Date.now() + decision.ms;
        }
        if (releaseAt !== undefined) held.push(answer);
        else client.write(answer);
      });
      server.on('end', () => {
        if (releaseAt === undefined) {
          client.end();
          return;
        }
        const timer = setTimeout(
          () => {
            timers.delete(timer);
            if (!client.destroyed) client.end(Buffer.concat(held));
          },
          Math.max(0, releaseAt - Date.now()),
        );
        timers.add(timer);
      });
      client.on('close', () => {
        if (decision.action !== 'delay-answer') server.destroy();
      });
    };
    client.on('data', onData);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const unchecked = checkAnswersFrom(url);
  return {
    url,
    handled,
    close: () =>
      new Promise<void>((resolve) => {
        unchecked();
        for (const timer of timers) clearTimeout(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function answerDirectly(
  client: net.Socket,
  decision: Extract<Decision, { action: 'answer' }>,
): void {
  const body = decision.body === undefined ? '' : JSON.stringify(decision.body);
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-Id': `proxy-${Math.random().toString(36).slice(2)}`,
    Connection: 'close',
    ...decision.headers,
  };
  client.end(
    `HTTP/1.1 ${decision.status} ${STATUS_TEXT[decision.status] ?? 'Status'}\r\n` +
      Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}`)
        .join('\r\n') +
      `\r\n\r\n${body}`,
  );
}
