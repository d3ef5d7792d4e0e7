import { createServer } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { freeLoopbackPort, startStandInServer } from '../../src/index.js';

describe('startStandInServer', () => {
  it('when a request arrives, then the handler answers it; once closed, nothing listens there', async () => {
    const standIn = await startStandInServer((req, res) => res.end(`${req.method} ${req.url}`));
    const answer = await fetch(`${standIn.url}/things?x=1`);
    expect(await answer.text()).toBe('GET /things?x=1');

    await standIn.close();
    await expect(fetch(standIn.url)).rejects.toThrow();
  });

  it('when a request is still open, then close ends it rather than waiting for it', async () => {
    const standIn = await startStandInServer(() => {});
    const outcome = fetch(standIn.url).then(
      () => 'answered',
      () => 'ended',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await standIn.close();
    expect(await outcome).toBe('ended');
  });
});

describe('freeLoopbackPort', () => {
  it('when a port is given, then a server can listen on it', async () => {
    const port = await freeLoopbackPort();
    expect(port).toBeGreaterThan(0);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
