// A network that silently drops every packet (no reset: a proxy or a firewall that stops forwarding)
// leaves a query waiting for an answer that never comes. Before queryTimeoutMs, a write, a group or a
// prune started then never returned, and the checkpoint the runtime writes on Ctrl+C waited with it:
// the process did not end until a second Ctrl+C. Now a query the server stays silent on for
// queryTimeoutMs, and that a check on a new connection gets no answer for either, fails (a server
// that answers the check is waited for: silence-limit.test.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import { CrewlineError } from '@crewline/events';
import { type GrowingRun, growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import type { CheckpointWrite } from '@crewline/runtime-state';
import { afterEach, expect, it } from 'vitest';
import { PostgresProvider } from './postgres-provider.js';
import { type BlackHoleProxy, startBlackHoleProxy } from './test-support/black-hole-proxy.js';
import {
  describeWithPostgres,
  testServerUrl,
  useTemporaryLocations,
  withServer,
} from './test-support/test-server.js';

const temporary = useTemporaryLocations();
const proxies: BlackHoleProxy[] = [];
afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
});

const queryTimeoutMs = 1_000;
/** The check of a silent server after queryTimeoutMs: at most 5 s, or queryTimeoutMs when shorter. */
const checkMs = queryTimeoutMs;
/** Far longer than a query that is given up on after queryTimeoutMs and the check, far shorter than forever. */
const patienceMs = 15_000;

/** A location of the test server reached through a new black hole proxy (its URL keeps the password). */
async function behindProxy(): Promise<{ proxy: BlackHoleProxy; location: string }> {
  const server = new URL(testServerUrl()!);
  const proxy = await startBlackHoleProxy(server.hostname, Number(server.port));
  proxies.push(proxy);
  const location = new URL(temporary.location());
  location.port = String(proxy.port);
  return { proxy, location: location.href };
}

/** How `work` ended, and after how long; 'still waiting' when it had not after {@link patienceMs}. */
async function outcomeOf(work: () => Promise<unknown>): Promise<{ outcome: unknown; elapsedMs: number }> {
  const startedAt = performance.now();
  const outcome = await Promise.race([
    work().then(
      () => 'succeeded',
      (error: unknown) => error,
    ),
    sleep(patienceMs).then(() => 'still waiting'),
  ]);
  return { outcome, elapsedMs: performance.now() - startedAt };
}

type Operation = (
  provider: PostgresProvider,
  location: string,
  run: GrowingRun,
  stored: CheckpointWrite,
) => Promise<unknown>;

const operations: [string, 'write_failed' | 'read_failed', Operation][] = [
  [
    'a write',
    'write_failed',
    (provider, location, run, stored) => provider.write(location, nextWrites(run, 1, stored)[0]!),
  ],
  [
    'a group',
    'write_failed',
    (provider, location, run, stored) => provider.writeBatch(location, nextWrites(run, 3, stored)),
  ],
  [
    'a read',
    'read_failed',
    (provider, location, _run, stored) => provider.read(location, stored.metadata.id),
  ],
  ['a listing', 'read_failed', (provider, location) => provider.list(location)],
  ['a prune', 'read_failed', (provider, location) => provider.prune(location, { keep: 1 })],
  ['a garbage collection', 'write_failed', (provider, location) => provider.collectGarbage(location)],
  [
    // Its own limit is a quarter of the lease (150 s here): the server's silence gives it up sooner.
    'a lease claim',
    'write_failed',
    (provider, location, _run, stored) =>
      provider.claimLease(location, {
        lineageId: stored.metadata.lineageId,
        owner: 'the timeout test',
        holder: 'the timeout test',
        checkpointId: stored.metadata.id,
        ttlMs: 600_000,
      }),
  ],
];

describeWithPostgres('a server that stops answering (queryTimeoutMs)', () => {
  it.each(operations)(
    '%s fails with a typed error after queryTimeoutMs and a check that gets no answer, is not tried again, and the stuck connection is never lent again',
    async (_name, code, operation) => {
      const { proxy, location } = await behindProxy();
      // One connection: a stuck client given back to the pool would be the next caller's.
      const provider = temporary.track(new PostgresProvider({ poolSize: 1, queryTimeoutMs }));
      const run = growingRun({ tasks: 2 });
      const [stored] = nextWrites(run, 1);
      await provider.write(location, stored!);
      const acceptedBefore = proxy.accepted;

      proxy.blackHole(true);
      const { outcome, elapsedMs } = await outcomeOf(() => operation(provider, location, run, stored!));

      expect(outcome).toBeInstanceOf(CrewlineError);
      const error = outcome as CrewlineError;
      expect(error.code).toBe(code);
      expect(error.message).toContain(`did not answer within ${queryTimeoutMs} ms`);
      expect(error.message).toContain('queryTimeoutMs');
      expect(error.message).toContain('a check on a new connection got no answer either');
      expect(error.message).toContain(`127.0.0.1:${proxy.port}`);
      expect(error.details).toMatchObject({ unreachable: true, timedOut: true });
      expect(error.details?.connectionLost).toBeUndefined();
      expect(error.details?.serverAnswered).toBeUndefined();
      const password = new URL(testServerUrl()!).password;
      expect(password.length).toBeGreaterThan(0);
      expect(`${error.message} ${JSON.stringify(error.details)}`).not.toContain(password);
      expect(elapsedMs).toBeGreaterThanOrEqual((queryTimeoutMs + checkMs) * 0.9);
      expect(elapsedMs).toBeLessThan(queryTimeoutMs + checkMs + 4_000);
      // Not tried again on a fresh connection into the same black hole: the one new connection is the check's.
      expect(proxy.accepted).toBe(acceptedBefore + 1);

      proxy.blackHole(false);
      const after = await outcomeOf(() => provider.list(location));
      expect(after.outcome).toBe('succeeded');
      expect(after.elapsedMs).toBeLessThan(queryTimeoutMs);
      // On a new connection: the one whose answer never came was closed, not given back.
      expect(proxy.accepted).toBe(acceptedBefore + 2);
    },
  );

  it('a write given up on may still land; written again, it is stored once and its run continues', async () => {
    const { proxy, location: behind } = await behindProxy();
    const provider = temporary.track(new PostgresProvider({ poolSize: 2, queryTimeoutMs }));
    const location = provider.resolveLocation(behind);
    const schema = new URL(location).searchParams.get('schema')!;
    const run = growingRun({ tasks: 3 });
    const [root, child, grandchild] = nextWrites(run, 3);
    await provider.write(location, root!);

    const timedOut = await withServer(async (blocker) => {
      // The write reaches the server and waits for this lock; then the network goes silent.
      await blocker.query('BEGIN');
      await blocker.query(`LOCK TABLE "${schema}".checkpoints IN EXCLUSIVE MODE`);
      const pending = outcomeOf(() => provider.write(location, child!));
      await sleep(200);
      proxy.blackHole(true);
      const { outcome } = await pending;
      await blocker.query('ROLLBACK');
      return outcome;
    });
    expect(CrewlineError.hasCode(timedOut, 'write_failed')).toBe(true);
    expect((timedOut as CrewlineError).message).toContain('may still');

    // The first attempt's backend goes on once the lock is released, and may commit the checkpoint:
    // written again, a stored checkpoint is accepted as the same one.
    proxy.blackHole(false);
    const again = await provider.write(location, child!);
    expect(again.id).toBe(child!.metadata.id);
    await provider.write(location, grandchild!);
    const { rows } = await withServer((client) =>
      client.query<{ id: string; count: string }>(
        `SELECT id, count(*) AS count FROM "${schema}".checkpoints GROUP BY id ORDER BY id`,
      ),
    );
    expect(rows).toEqual([root, child, grandchild].map((write) => ({ id: write!.metadata.id, count: '1' })));
  });

  it('refuses a queryTimeoutMs that is not a whole number of milliseconds, naming the option', () => {
    expect(() => new PostgresProvider({ queryTimeoutMs: 0 })).toThrow(/queryTimeoutMs/);
    expect(() => new PostgresProvider({ queryTimeoutMs: 1.5 })).toThrow(/queryTimeoutMs/);
    expect(new PostgresProvider().options.queryTimeoutMs).toBe(30_000);
  });
});
