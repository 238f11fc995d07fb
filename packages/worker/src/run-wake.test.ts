import { connect as connectSocket, createServer, type Server, type Socket } from 'node:net';
import { describeWithPostgres, testServerUrl, withServer } from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { parseQueueLocation } from './connection.js';
import { RunWake, wakeChannel } from './run-wake.js';

/** A TCP relay to the test server that can go silent (a NAT that dropped the connection). */
async function silentableRelay(): Promise<{ url: string; silence(): void; close(): Promise<void> }> {
  const target = new URL(testServerUrl()!);
  let silent = false;
  const sockets: Socket[] = [];
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connectSocket(Number(target.port), target.hostname);
    sockets.push(client, upstream);
    client.on('data', (data) => void (silent || upstream.write(data)));
    upstream.on('data', (data) => void (silent || client.write(data)));
    client.on('end', () => void (silent || upstream.end()));
    upstream.on('end', () => void (silent || client.end()));
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const url = new URL(target.href);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.href,
    silence: () => {
      silent = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describeWithPostgres('the listener that wakes idle workers', () => {
  it('is woken by a notice on its channel, and closes within a second when its connection went silent', async () => {
    // A worker's SIGTERM waited on the listener's goodbye: with a connection a NAT dropped silently,
    // close() was still waiting after 15 s (the pod's grace period runs out first).
    const relay = await silentableRelay();
    cleanups.push(relay.close);
    const location = parseQueueLocation(`${relay.url}${relay.url.includes('?') ? '&' : '?'}schema=wake_test`);
    let wakes = 0;
    const wake = new RunWake(location, () => {
      wakes += 1;
    });
    await wake.start();
    const afterStart = wakes;
    await withServer((client) => client.query('SELECT pg_notify($1, $2)', [wakeChannel(location), 'job']));
    await expect.poll(() => wakes, { timeout: 5000 }).toBe(afterStart + 1);

    relay.silence();
    const closing = performance.now();
    await wake.close();
    expect(performance.now() - closing).toBeLessThan(5000);
  });
});
