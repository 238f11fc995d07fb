// A connection the server ended (a restart, a failover, pg_terminate_backend) between two operations
// of a process: the lease operations, which are idempotent by their owner token, and writes, which
// check by id whether their first attempt landed, are tried once more on a fresh connection, so a
// Ctrl+C during a restart still stores its checkpoint and gives its lease back.
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import type { LeaseToken } from '@crewline/runtime-state';
import { afterEach, expect, it } from 'vitest';
import { connectionLost, interceptNextWrite } from './test-support/next-write.js';
import { RecordingProvider } from './test-support/recording-provider.js';
import { describeWithPostgres, testServerUrl, useTemporaryLocations } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

function setup(): { provider: RecordingProvider; location: string; applicationName: string } {
  // Its own application name, so that ending its connections leaves every other test's alone.
  const applicationName = `retry_${randomBytes(4).toString('hex')}`;
  const provider = temporary.track(new RecordingProvider({ applicationName }));
  return { provider, location: provider.resolveLocation(temporary.location()), applicationName };
}

/**
 * Ends every backend of `applicationName` and waits until they have exited, from another process and
 * without giving this one's event loop a turn: the pool's idle connections are dead, and it does not
 * know yet, as when the server went down just before the next operation.
 */
function endConnectionsNow(applicationName: string): number {
  const ended = execFileSync(
    'psql',
    [
      testServerUrl()!,
      '-Atc',
      `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM pg_stat_activity WHERE application_name = '${applicationName}'`,
    ],
    { encoding: 'utf8' },
  );
  return Number(ended.trim());
}

function tokenOf(lineageId: string): LeaseToken & { holder: string } {
  return { lineageId, owner: randomUUID(), holder: 'the retry test' };
}

describeWithPostgres('an operation right after the server ended every connection', () => {
  it('releases a lease: the run can be continued at once', async () => {
    const { provider, location, applicationName } = setup();
    const run = growingRun({ tasks: 3, outputBytes: 100 });
    const [root] = nextWrites(run, 1);
    await provider.write(location, root!);
    const token = tokenOf(root!.metadata.lineageId);
    await provider.claimLease(location, { ...token, checkpointId: root!.metadata.id, ttlMs: 60_000 });

    expect(endConnectionsNow(applicationName)).toBeGreaterThan(0);
    await provider.releaseLease(location, token);

    // Another process claims the head at once: the lease is gone, not waiting to run out.
    const next = tokenOf(token.lineageId);
    const taken = await provider.claimLease(location, {
      ...next,
      checkpointId: root!.metadata.id,
      ttlMs: 1000,
    });
    expect(taken.owner).toBe(next.owner);
  });

  it('claims and renews a lease', async () => {
    const { provider, location, applicationName } = setup();
    const run = growingRun({ tasks: 3, outputBytes: 100 });
    const [root] = nextWrites(run, 1);
    await provider.write(location, root!);
    const token = tokenOf(root!.metadata.lineageId);

    expect(endConnectionsNow(applicationName)).toBeGreaterThan(0);
    const lease = await provider.claimLease(location, {
      ...token,
      checkpointId: root!.metadata.id,
      ttlMs: 60_000,
    });
    expect(lease.owner).toBe(token.owner);

    expect(endConnectionsNow(applicationName)).toBeGreaterThan(0);
    const renewed = await provider.renewLease(location, token, 120_000);
    expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(Date.parse(lease.expiresAt));
  });

  it('stores a write and a group once each, byte for byte', async () => {
    const { provider, location, applicationName } = setup();
    const run = growingRun({ tasks: 4, outputBytes: 300 });
    const [root, next] = nextWrites(run, 2);
    await provider.write(location, root!);

    expect(endConnectionsNow(applicationName)).toBeGreaterThan(0);
    expect((await provider.write(location, next!)).id).toBe(next!.metadata.id);

    const group = nextWrites(run, 3, next);
    expect(endConnectionsNow(applicationName)).toBeGreaterThan(0);
    const stored = await provider.writeBatch(location, group);

    expect(stored.map((checkpoint) => checkpoint.id)).toEqual(group.map((write) => write.metadata.id));
    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual(
      [root, next, ...group].map((write) => write!.metadata.id),
    );
    expect(await provider.mismatches(location)).toEqual([]);
  });
});

/**
 * Lets the next statement that calls `crewline_write` run and commit, then closes its socket and
 * fails it as a connection lost before the answer came back: the write landed, and its writer
 * cannot know.
 */
function loseTheAnswerOfTheNextWrite(): { restore(): void } {
  return interceptNextWrite(async (client, send) => {
    await send();
    return connectionLost(client);
  });
}

describeWithPostgres('a write whose commit was never acknowledged', () => {
  let lost: { restore(): void } | undefined;
  afterEach(() => lost?.restore());

  it('is found stored by its id on a fresh connection: a single write', async () => {
    const { provider, location } = setup();
    const run = growingRun({ tasks: 3, outputBytes: 200 });
    const [root, next] = nextWrites(run, 2);
    await provider.write(location, root!);

    lost = loseTheAnswerOfTheNextWrite();
    expect((await provider.write(location, next!)).id).toBe(next!.metadata.id);

    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual([
      root!.metadata.id,
      next!.metadata.id,
    ]);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('is found stored by its ids on a fresh connection: a group, not written again (which a stored id refuses)', async () => {
    const { provider, location } = setup();
    const run = growingRun({ tasks: 4, outputBytes: 200 });
    const [root] = nextWrites(run, 1);
    await provider.write(location, root!);
    const group = nextWrites(run, 3, root);

    lost = loseTheAnswerOfTheNextWrite();
    const stored = await provider.writeBatch(location, group);

    expect(stored.map((checkpoint) => checkpoint.id)).toEqual(group.map((write) => write.metadata.id));
    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual(
      [root, ...group].map((write) => write!.metadata.id),
    );
    // The next write continues the group as usual.
    const [after] = nextWrites(run, 1, group.at(-1));
    await provider.write(location, after!);
    expect(await provider.mismatches(location)).toEqual([]);
  });
});
