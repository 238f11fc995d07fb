import dns from 'node:dns';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A run enqueued at a new location, and a role of its own (connection limit 5) that may open it. */
async function limitedRole() {
  const location = temporaryLocation();
  const schema = new URL(location).searchParams.get('schema')!;
  const role = `wait_limited_${Math.random().toString(36).slice(2, 8)}`;
  const setupQueue = new RunQueue({ location, create: true });
  const { run } = await setupQueue.enqueue('report', { inputs: { topic: 'tides' } });
  await withServer(async (client) => {
    await client.query(`CREATE ROLE ${role} LOGIN PASSWORD 'wait-pass-1' CONNECTION LIMIT 5`);
    // A member of the role that made the queue: it may open (start) and read it as that role does.
    await client.query(`GRANT "${new URL(location).username}" TO ${role}`);
  });
  const limited = new URL(location);
  limited.username = role;
  limited.password = 'wait-pass-1';
  cleanups.push(async () => {
    await setupQueue.close();
    await dropLocation(location);
    await withServer(async (client) => {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`);
      await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`);
      await client.query(`DROP OWNED BY ${role}`);
      await client.query(`DROP ROLE ${role}`);
    });
  });
  return { run, role, setupQueue, limitedLocation: limited.toString() };
}

describeWithPostgres('queue.waitForEnd on a refusal that passes', () => {
  // Before: rejected with "sorry, too many connections for role" (53300) although timeoutMs left 59 s.
  it('with timeoutMs, polls again while the server accepts no more connections (53300) for 1 s', async () => {
    const { run, role, setupQueue, limitedLocation } = await limitedRole();
    const queue = new RunQueue({ location: limitedLocation, poolSize: 1 });
    cleanups.push(() => queue.close().catch(() => undefined));
    const waiting = queue.waitForEnd([run.id], { intervalMs: 100, timeoutMs: 60_000 }).then(
      (records) => ({ records }),
      (error: unknown) => ({ error }),
    );
    await sleep(500);
    // No connection allowed to the role, and its open one ended: the next poll's login is refused.
    await withServer(async (client) => {
      await client.query(`ALTER ROLE ${role} CONNECTION LIMIT 0`);
      await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`);
    });
    await sleep(1000);
    await withServer((client) => client.query(`ALTER ROLE ${role} CONNECTION LIMIT 5`));
    await setupQueue.cancel(run.id);
    expect(await waiting).toMatchObject({ records: [{ id: run.id, status: 'cancelled' }] });
  });

  // Without a deadline a refusal that may last is still thrown, so the wait never hangs on it.
  it('without timeoutMs, rejects when the server accepts no more connections (53300)', async () => {
    const { run, role, limitedLocation } = await limitedRole();
    await withServer((client) => client.query(`ALTER ROLE ${role} CONNECTION LIMIT 0`));
    const queue = new RunQueue({ location: limitedLocation, poolSize: 1 });
    cleanups.push(() => queue.close().catch(() => undefined));
    const waiting = queue.waitForEnd([run.id], { intervalMs: 100 });
    const outcome = await Promise.race([
      waiting.then(
        () => 'resolved',
        (error: unknown) => `rejected: ${(error as Error).message}`,
      ),
      sleep(8_000, 'still polling after 8 s'),
    ]);
    expect(outcome).toMatch(/^rejected: .*too many connections/);
  });

  // Before: rejected at once with "cannot reach the Postgres server" (queueOpenError wrapping ECONNREFUSED).
  it('from a queue not yet opened, polls again while the server refuses connections for 1 s', async () => {
    const location = temporaryLocation();
    const schema = new URL(location).searchParams.get('schema')!;
    const original = new URL(location);
    const setupQueue = new RunQueue({ location, create: true });
    const { run } = await setupQueue.enqueue('report', { inputs: { topic: 'tides' } });
    // A free port with nothing listening on it yet (connections refused), then a proxy to the server there.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
      const server = net.connect({ host: original.hostname, port: Number(original.port || 5432) });
      sockets.add(client).add(server);
      server.on('error', () => client.destroy());
      client.on('error', () => server.destroy());
      client.pipe(server).pipe(client);
    });
    const proxied = new URL(location);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(port);
    const queue = new RunQueue({ location: proxied.toString(), poolSize: 1 });
    cleanups.push(async () => {
      await queue.close().catch(() => undefined);
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
      await setupQueue.close();
      await dropLocation(location);
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const waiting = queue.waitForEnd([run.id], { intervalMs: 100, timeoutMs: 30_000 }).then(
      (records) => ({ records }),
      (error: unknown) => ({ error }),
    );
    await sleep(1000);
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    await setupQueue.cancel(run.id);
    expect(await waiting).toMatchObject({ records: [{ id: run.id, status: 'cancelled' }] });
  });
  // Before: rejected with "getaddrinfo EAI_AGAIN" although timeoutMs left 59 s.
  it('polls again while the host name of the server cannot be looked up for now (EAI_AGAIN) for 1 s', async () => {
    const location = temporaryLocation();
    const schema = new URL(location).searchParams.get('schema')!;
    const original = new URL(location);
    const named = new URL(location);
    named.hostname = 'pg-primary.wait-for-end.test';
    const realLookup = dns.lookup;
    let failing = false;
    // The name resolves to the server's address, except while `failing`, as a DNS hiccup in a failover.
    const lookup = (host: string, options: unknown, callback?: unknown) => {
      const done = (typeof options === 'function' ? options : callback) as (error: Error) => void;
      const lookupOptions = typeof options === 'function' ? {} : options;
      if (host !== named.hostname) return (realLookup as Function)(host, lookupOptions, done);
      if (failing) {
        const error = Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: 'EAI_AGAIN' });
        return process.nextTick(() => done(error));
      }
      return (realLookup as Function)(original.hostname, lookupOptions, done);
    };
    (dns as { lookup: unknown }).lookup = lookup;
    const setupQueue = new RunQueue({ location, create: true });
    const queue = new RunQueue({ location: named.toString(), poolSize: 1 });
    cleanups.push(async () => {
      (dns as { lookup: unknown }).lookup = realLookup;
      await queue.close().catch(() => undefined);
      await setupQueue.close();
      await dropLocation(location);
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const { run } = await setupQueue.enqueue('report', { inputs: { topic: 'tides' } });
    const waiting = queue.waitForEnd([run.id], { intervalMs: 100, timeoutMs: 60_000 }).then(
      (records) => ({ records }),
      (error: unknown) => ({ error }),
    );
    await sleep(500);
    failing = true;
    // The queue's connection ended (a failover): the next poll must look the name up again.
    await withServer((client) =>
      client.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'crewline-queue' AND pid <> pg_backend_pid()`,
      ),
    );
    await sleep(1000);
    failing = false;
    await setupQueue.cancel(run.id);
    expect(await waiting).toMatchObject({ records: [{ id: run.id, status: 'cancelled' }] });
  });
});
