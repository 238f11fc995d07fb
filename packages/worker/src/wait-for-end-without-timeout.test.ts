import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What `waitForEnd` did within `withinMs`: resolved, rejected (with the error's message) or still polling. */
async function outcomeOf(waiting: Promise<unknown>, withinMs: number): Promise<string> {
  const outcome = waiting.then(
    () => 'resolved',
    (error: unknown) => `rejected: ${(error as Error).message}`,
  );
  return Promise.race([outcome, sleep(withinMs, `still polling after ${withinMs} ms`)]);
}

/** A local port nothing listens on (connections to it are refused). */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

// Before (414d9d8 looked inside the queue's own "cannot reach" error with no deadline): still polling after 8 s.
describe('queue.waitForEnd without timeoutMs on a server never reached', () => {
  it('rejects at once when the server refuses connections', async () => {
    const queue = new RunQueue({ location: `postgres://postgres@127.0.0.1:${await freePort()}/postgres` });
    cleanups.push(() => queue.close().catch(() => undefined));
    const outcome = await outcomeOf(queue.waitForEnd(['00000000-0000-4000-8000-000000000000']), 8_000);
    expect(outcome).toMatch(/^rejected: .*cannot reach/i);
  });

  it('rejects at once when the host name cannot be looked up', async () => {
    const queue = new RunQueue({ location: 'postgres://postgres@no-such-host.invalid:5432/postgres' });
    cleanups.push(() => queue.close().catch(() => undefined));
    const outcome = await outcomeOf(queue.waitForEnd(['00000000-0000-4000-8000-000000000000']), 8_000);
    expect(outcome).toMatch(/^rejected: /);
  });
});

/**
 * A run enqueued at a new location, and a queue that reaches that location's server through a local
 * proxy: `stop` ends every connection and refuses new ones (a server going down), `restart` listens again.
 */
async function queueBehindProxy() {
  const location = temporaryLocation();
  const schema = new URL(location).searchParams.get('schema')!;
  const original = new URL(location);
  const setupQueue = new RunQueue({ location, create: true });
  const { run } = await setupQueue.enqueue('report', { inputs: { topic: 'tides' } });
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const server = net.connect({ host: original.hostname, port: Number(original.port || 5432) });
    sockets.add(client).add(server);
    server.on('error', () => client.destroy());
    client.on('error', () => server.destroy());
    client.pipe(server).pipe(client);
  });
  const listen = () => new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
  await listen();
  const proxied = new URL(location);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  const queue = new RunQueue({ location: proxied.toString(), poolSize: 1 });
  const stop = async () => {
    const closed = new Promise((resolve) => proxy.close(resolve));
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await closed;
  };
  cleanups.push(async () => {
    await queue.close().catch(() => undefined);
    if (proxy.listening) await stop();
    await setupQueue.close();
    await dropLocation(location);
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
  });
  return { run, setupQueue, queue, stop, restart: listen };
}

describeWithPostgres('queue.waitForEnd without timeoutMs after reaching its server', () => {
  it('polls again while its server is down for 1 s (a restart), and resolves when the run ends', async () => {
    const { run, setupQueue, queue, stop, restart } = await queueBehindProxy();
    const waiting = queue.waitForEnd([run.id], { intervalMs: 100 });
    await sleep(500);
    await stop();
    await sleep(1000);
    await restart();
    await setupQueue.cancel(run.id);
    expect(await outcomeOf(waiting, 20_000)).toBe('resolved');
  });

  // Before: rejected at once ("cannot reach"): its first poll got none of the tolerance of later ones.
  it('polls again when its server is down at its first poll, having been reached by the queue before, and resolves when the run ends', async () => {
    const { run, setupQueue, queue, stop, restart } = await queueBehindProxy();
    expect(await queue.get(run.id)).toMatchObject({ status: 'queued' });
    await stop();
    const waiting = queue.waitForEnd([run.id], { intervalMs: 100 });
    waiting.catch(() => undefined);
    await sleep(1000);
    await restart();
    await setupQueue.cancel(run.id);
    expect(await outcomeOf(waiting, 20_000)).toBe('resolved');
  });

  // Before: polled forever (a refused connection counted as lost, with no deadline to stop at).
  it('rejects with the last error once its server has stayed down for the bounded outage', async () => {
    const { run, queue, stop } = await queueBehindProxy();
    const waiting = queue.waitForEnd([run.id], { intervalMs: 200 });
    waiting.catch(() => undefined);
    await sleep(500);
    const down = Date.now();
    await stop();
    const outcome = await outcomeOf(waiting, 45_000);
    expect(outcome).toMatch(/^rejected: .*(ECONNREFUSED|Connection terminated|cannot reach)/i);
    // Not at the first failed poll: the outage allowed (30 s) was waited out first.
    expect(Date.now() - down).toBeGreaterThanOrEqual(29_000);
  });
});
