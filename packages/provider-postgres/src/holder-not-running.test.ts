// A claim refused because a holder on this machine has the run, whose pid is no longer running (it
// was killed with SIGKILL): the refusal says so, and when the lease runs out. It is not taken over
// before: the holder names a host, and containers with the same host name have pid spaces of their
// own, so the pid may well run in another one.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { CrewlineError } from '@crewline/events';
import { growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import { expect, it } from 'vitest';
import { PostgresProvider } from './postgres-provider.js';
import { runScript } from './test-support/child-processes.js';
import { describeWithPostgres, useTemporaryLocations } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

/** The pid of a process that ran on this machine and has ended. */
function endedPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(child.stdout);
}

/**
 * Claims the head of a fresh run for `holder` in a child process (a lease of this process is said to
 * be one, see holder-this-process.test.ts), then claims it as another owner and returns the refusal.
 */
async function refusalOfHeldBy(holder: string): Promise<CrewlineError> {
  const provider = temporary.track(new PostgresProvider({ poolSize: 2 }));
  const given = temporary.location();
  const location = provider.resolveLocation(given);
  const [root] = nextWrites(growingRun({ tasks: 2, outputBytes: 50 }), 1);
  await provider.write(location, root!);
  const claim = { lineageId: root!.metadata.lineageId, checkpointId: root!.metadata.id, ttlMs: 30_000 };
  const child = await runScript('./lease-claim-process.ts', [
    given,
    claim.lineageId,
    claim.checkpointId,
    holder,
  ]);
  expect(child.code, child.stderr).toBe(0);
  const refusal = await provider
    .claimLease(location, { ...claim, owner: randomUUID(), holder: 'the second claimer' })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  expect(CrewlineError.hasCode(refusal, 'conflict')).toBe(true);
  return refusal as CrewlineError;
}

describeWithPostgres('a claim refused by a holder of this machine', () => {
  it('says that the holder pid is not running here, and is not granted before the lease runs out', async () => {
    const pid = endedPid();
    const holder = `crew on ${hostname()}, pid ${pid}`;

    const refusal = await refusalOfHeldBy(holder);

    expect(refusal.message).toContain(`is being continued by ${holder}, whose lease has`);
    expect(refusal.message).toContain(`pid ${pid} on this machine is not running`);
    expect(refusal.message).toContain(
      'its lease runs out then, not sooner (a container with the same host name',
    );
    expect(refusal.message).toContain("or fork instead (onConflict: 'fork')");
    expect(refusal.details).toMatchObject({
      holder,
      atClaim: true,
      holderNotRunningHere: true,
      holderPid: pid,
    });
    expect(refusal.details?.expiresInMs).toBeGreaterThan(20_000);
  });

  it('says nothing of the kind for a pid that runs here, or a holder of another host', async () => {
    for (const holder of [
      `crew on ${hostname()}, pid ${process.pid}`,
      `crew on not-${hostname()}, pid ${endedPid()}`,
      'a worker of the test',
    ]) {
      const refusal = await refusalOfHeldBy(holder);
      expect(refusal.message).not.toContain('not running');
      expect(refusal.details?.holderNotRunningHere).toBeUndefined();
      expect(refusal.details?.holderPid).toBeUndefined();
    }
  });
});
