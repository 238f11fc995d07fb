// queryTimeoutMs limits how long the server may stay silent, not how long a query may take. Before,
// it was node-postgres' query_timeout (a deadline on the whole query): a write waiting for the schema
// lock behind a long prune elsewhere failed (and usually landed anyway), a layout upgrade of a big
// store could never finish, and a large checkpoint over a slow but working link failed mid-transfer.
import { connect as connectTcp, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { CrewlineError } from '@crewline/events';
import { growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import { afterEach, expect, it } from 'vitest';
import { PostgresProvider } from './postgres-provider.js';
import { lockKey } from './schema.js';
import { type BlackHoleProxy, startBlackHoleProxy } from './test-support/black-hole-proxy.js';
import {
  describeWithPostgres,
  testServerUrl,
  useTemporaryLocations,
  withServer,
} from './test-support/test-server.js';

const temporary = useTemporaryLocations();
const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const queryTimeoutMs = 1_000;

/**
 * `location` (with its schema) reached through a proxy listening on `port`, with the test server's
 * password (a canonical location has none, and the proxy is another server to the provider).
 */
function throughPort(location: string, port: number): string {
  const url = new URL(testServerUrl()!);
  url.port = String(port);
  url.search = new URL(location).search;
  return url.href;
}

async function blackHoleProxy(): Promise<BlackHoleProxy> {
  const server = new URL(testServerUrl()!);
  const proxy = await startBlackHoleProxy(server.hostname, Number(server.port));
  closers.push(() => proxy.close());
  return proxy;
}

/**
 * A proxy that passes the server's bytes on at `bytesPerSecond`, a little every 20 ms (never silent
 * while it has some), and once `refuseNew` is set closes every new connection at once.
 */
async function slowProxy(bytesPerSecond: number) {
  const target = new URL(testServerUrl()!);
  let refuseNew = false;
  let fromServer = 0;
  const sockets = new Set<Socket>();
  const server = createServer((downstream) => {
    sockets.add(downstream);
    downstream.on('error', () => undefined);
    if (refuseNew) {
      downstream.destroy();
      return;
    }
    const upstream = connectTcp(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on('error', () => undefined);
    downstream.on('data', (chunk) => upstream.write(chunk));
    downstream.on('close', () => upstream.destroy());
    upstream.on('close', () => downstream.destroy());
    const queue: Buffer[] = [];
    upstream.on('data', (chunk: Buffer) => queue.push(chunk));
    const perTick = Math.max(1, Math.floor(bytesPerSecond / 50));
    const timer = setInterval(() => {
      let budget = perTick;
      while (budget > 0 && queue.length > 0) {
        const head = queue[0]!;
        const part = head.subarray(0, budget);
        downstream.write(part);
        fromServer += part.length;
        budget -= part.length;
        if (part.length === head.length) queue.shift();
        else queue[0] = head.subarray(part.length);
      }
    }, 20);
    downstream.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise((closed) => server.close(closed));
  });
  return {
    port: (server.address() as { port: number }).port,
    get fromServer() {
      return fromServer;
    },
    refuseNewConnections() {
      refuseNew = true;
    },
  };
}

describeWithPostgres('queryTimeoutMs: how long the server may stay silent', () => {
  it('a write waiting for the schema lock longer than the limit (a long prune or GC elsewhere) is stored', async () => {
    const provider = temporary.track(new PostgresProvider({ poolSize: 2, queryTimeoutMs }));
    const location = provider.resolveLocation(temporary.location());
    const schema = new URL(location).searchParams.get('schema')!;
    const run = growingRun({ tasks: 3 });
    const [root, child] = nextWrites(run, 2);
    await provider.write(location, root!);
    const holdMs = 2.5 * queryTimeoutMs;
    const startedAt = performance.now();
    const outcome = await withServer(async (other) => {
      // What a prune, a garbage collection or a layout upgrade holds for its whole transaction.
      await other.query('BEGIN');
      await other.query(`SELECT pg_advisory_xact_lock(${lockKey(schema)})`);
      const pending = provider.write(location, child!).then(
        () => 'stored',
        (error: unknown) => error,
      );
      await sleep(holdMs);
      await other.query('COMMIT');
      return pending;
    });
    expect(outcome).toBe('stored');
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(holdMs);
    expect(await provider.read(location, child!.metadata.id)).toEqual({ text: child!.text() });
  });

  it('a read streaming for longer than the limit over a slow link is not cut: each byte starts the limit again', async () => {
    const direct = temporary.track(new PostgresProvider());
    const location = direct.resolveLocation(temporary.location());
    const run = growingRun({ tasks: 2, outputBytes: 400_000 });
    const written = nextWrites(run, 4);
    for (const write of written) await direct.write(location, write);

    const proxy = await slowProxy(512 * 1024);
    const slowLocation = throughPort(location, proxy.port);
    const slow = temporary.track(new PostgresProvider({ poolSize: 1, queryTimeoutMs: 500 }));
    await slow.list(slowLocation);
    // A check of the server would fail now: only the bytes that keep coming keep the read going.
    proxy.refuseNewConnections();
    const before = proxy.fromServer;
    const startedAt = performance.now();
    const read = await slow.read(slowLocation, written.at(-1)!.metadata.id);
    expect(read).toEqual({ text: written.at(-1)!.text() });
    // Several limits long, or the test would prove nothing.
    expect(performance.now() - startedAt).toBeGreaterThan(4 * 500);
    expect(proxy.fromServer - before).toBeGreaterThan(1_000_000);
  });

  it('a query whose session the server ended while the network dropped its packets fails once a check finds the session gone', async () => {
    const proxy = await blackHoleProxy();
    const provider = temporary.track(new PostgresProvider({ poolSize: 1, queryTimeoutMs }));
    const location = provider.resolveLocation(throughPort(temporary.location(), proxy.port));
    const schema = new URL(location).searchParams.get('schema')!;
    const run = growingRun({ tasks: 3 });
    const [root, child] = nextWrites(run, 2);
    await provider.write(location, root!);

    const { outcome, elapsedMs } = await withServer(async (other) => {
      await other.query('BEGIN');
      await other.query(`SELECT pg_advisory_xact_lock(${lockKey(schema)})`);
      const startedAt = performance.now();
      const pending = provider.write(location, child!).then(
        () => 'stored',
        (error: unknown) => error,
      );
      await sleep(200);
      // A firewall forgets the connection; the server then ends the session (an idle timeout, an
      // administrator): the FATAL that says so is lost with everything else on that connection.
      proxy.blackHoleOpenConnections();
      await other.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE '%crewline_write%'`,
      );
      const result = await Promise.race([pending, sleep(10_000).then(() => 'still waiting')]);
      await other.query('COMMIT');
      return { outcome: result, elapsedMs: performance.now() - startedAt };
    });
    expect(outcome).toBeInstanceOf(CrewlineError);
    const error = outcome as CrewlineError;
    expect(error.code).toBe('write_failed');
    expect(error.message).toContain(`did not answer within ${queryTimeoutMs} ms`);
    expect(error.message).toContain("found the query's session gone");
    // The server answered the check: a group written again one by one can land (runtime-state's write
    // queue rejects a timed-out group whole only when the server did not answer).
    expect(error.details).toMatchObject({
      unreachable: true,
      timedOut: true,
      timeoutMs: queryTimeoutMs,
      serverAnswered: true,
    });
    expect(elapsedMs).toBeLessThan(queryTimeoutMs + 4_000);
  });

  it('takes the limit from the location (?query_timeout_ms=), for the CLI and the worker, and leaves it out of the canonical location', async () => {
    const proxy = await blackHoleProxy();
    // The option's default is 30 s: only the location's limit makes this end within the test.
    const provider = temporary.track(new PostgresProvider({ poolSize: 1 }));
    const given = new URL(throughPort(temporary.location(), proxy.port));
    given.searchParams.set('query_timeout_ms', String(queryTimeoutMs));
    const location = provider.resolveLocation(given.href);
    expect(location).not.toContain('query_timeout_ms');
    const run = growingRun({ tasks: 2 });
    const [root, child] = nextWrites(run, 2);
    await provider.write(location, root!);

    proxy.blackHole(true);
    const startedAt = performance.now();
    const error = await provider.write(location, child!).catch((thrown: unknown) => thrown);
    expect(CrewlineError.hasCode(error, 'write_failed')).toBe(true);
    expect((error as CrewlineError).message).toContain(`did not answer within ${queryTimeoutMs} ms`);
    expect((error as CrewlineError).message).toContain('query_timeout_ms');
    expect((error as CrewlineError).message).toContain('a check on a new connection got no answer either');
    expect(performance.now() - startedAt).toBeLessThan(queryTimeoutMs + 4_000);
  });

  it.each(['0', '1.5', 'soon', '86400001'])('refuses ?query_timeout_ms=%s, naming it', (value) => {
    const provider = new PostgresProvider();
    const location = new URL(temporary.location());
    location.searchParams.set('query_timeout_ms', value);
    let refusal: unknown;
    try {
      provider.resolveLocation(location.href);
    } catch (error) {
      refusal = error;
    }
    expect(CrewlineError.hasCode(refusal, 'invalid_config')).toBe(true);
    expect((refusal as Error).message).toContain('query_timeout_ms');
  });
});
