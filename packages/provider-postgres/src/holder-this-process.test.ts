// A claim refused because this very process holds the lease (two kickoffs of one state in one
// program, a resume of a checkpoint it still runs) says so, as SQLite's refusals do: waiting for "a
// holder that died" to stop renewing would wait for the program itself. The holder's text proves
// nothing on its own (containers that share a host name have pid spaces of their own): a lease of
// another process with the very same text is not said to be this one's.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { CrewlineError } from '@crewline/events';
import { growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import { leaseHeldByOther } from '@crewline/runtime-state/internal';
import { expect, it } from 'vitest';
import { parseLocation } from './location.js';
import { PostgresProvider } from './postgres-provider.js';
import { runScript } from './test-support/child-processes.js';
import { describeWithPostgres, useTemporaryLocations, withServer } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

/** How the runtime names a holder of this process. */
const holderHere = `crew Research on ${hostname()}, pid ${process.pid}`;

/** A run with one stored checkpoint, and the claim of its head (for a fresh owner each time). */
async function storedRun() {
  const provider = temporary.track(new PostgresProvider({ poolSize: 2 }));
  const location = temporary.location();
  const resolved = provider.resolveLocation(location);
  const [root] = nextWrites(growingRun({ tasks: 2, outputBytes: 50 }), 1);
  await provider.write(resolved, root!);
  const lineageId = root!.metadata.lineageId;
  const checkpointId = root!.metadata.id;
  const claim = (holder = holderHere) => ({
    lineageId,
    checkpointId,
    owner: randomUUID(),
    holder,
    ttlMs: 30_000,
  });
  return { provider, location, resolved, lineageId, checkpointId, claim };
}

async function refusalOf(claim: Promise<unknown>): Promise<CrewlineError> {
  const refusal = await claim.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(CrewlineError.hasCode(refusal, 'conflict'), String(refusal)).toBe(true);
  return refusal as CrewlineError;
}

describeWithPostgres('a claim refused by a lease of this process', () => {
  it('says that the holder runs here, in the words of SQLite, through the same provider or another', async () => {
    const { provider, resolved, lineageId, claim } = await storedRun();
    await provider.claimLease(resolved, claim());
    const other = temporary.track(new PostgresProvider({ poolSize: 1 }));

    for (const claimer of [provider, other]) {
      const refusal = await refusalOf(claimer.claimLease(resolved, claim()));
      expect(refusal.details).toMatchObject({
        lineageId,
        holder: holderHere,
        atClaim: true,
        holderRunsHere: true,
      });
      expect(refusal.details?.holderNotRunningHere).toBeUndefined();
      const expiresInMs = refusal.details?.expiresInMs as number;
      expect(expiresInMs).toBeGreaterThan(20_000);
      expect(refusal.message).toBe(
        leaseHeldByOther('provider-postgres', lineageId, holderHere, expiresInMs, true).message,
      );
      expect(refusal.message).toContain('wait for it to end (its process is running on this machine)');
    }
  });

  it('does not say it once this process released the lease and another claimed it under the same name', async () => {
    const { provider, location, resolved, lineageId, checkpointId, claim } = await storedRun();
    const first = await provider.claimLease(resolved, claim());
    await provider.releaseLease(resolved, { lineageId, owner: first.owner });
    const child = await runScript('./lease-claim-process.ts', [
      location,
      lineageId,
      checkpointId,
      holderHere,
    ]);
    expect(child.code, child.stderr).toBe(0);

    const refusal = await refusalOf(provider.claimLease(resolved, claim()));
    expect(refusal.details).toMatchObject({ holder: holderHere, atClaim: true });
    expect(refusal.details?.holderRunsHere).toBeUndefined();
  });

  it('does not say it of a holder in another process, even one named as this process is', async () => {
    const { provider, location, resolved, lineageId, checkpointId, claim } = await storedRun();
    // This process held the run once; its lease ran out without a release (a process suspended past
    // it) and a process of another container with the same host name and pid claimed it.
    await provider.claimLease(resolved, claim());
    const schema = parseLocation(resolved, 'crewline').schema;
    await withServer((client) =>
      client.query(`UPDATE "${schema}".leases SET expires_at = clock_timestamp() - interval '1 second'`),
    );
    const child = await runScript('./lease-claim-process.ts', [
      location,
      lineageId,
      checkpointId,
      holderHere,
    ]);
    expect(child.code, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({ holder: holderHere });

    const refusal = await refusalOf(provider.claimLease(resolved, claim()));
    expect(refusal.details).toMatchObject({ lineageId, holder: holderHere, atClaim: true });
    expect(refusal.details?.holderRunsHere).toBeUndefined();
    expect(refusal.message).toContain('a holder that died stops renewing and its lease runs out');
  });
});
