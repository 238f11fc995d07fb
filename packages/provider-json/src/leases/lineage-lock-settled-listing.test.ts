import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, renameSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import type { LeaseRequest } from '@crewline/runtime-state';
import { afterAll, describe, expect, it } from 'vitest';
import { JsonProvider } from '../json-provider.js';

// Review r-wave3c: the claim of a lineage as new (a @persist() state's, at each nested kickoff)
// answers from listings a provider keeps between claims. On a real file system, after those
// listings had settled (3 s on the file system's clock), a checkpoint of the lineage another process
// wrote must still be seen, even with every directory's times set back (a restore, `touch -d`) or a
// branch directory moved in from a backup. The same cases on a faked clock and an NFS attribute
// cache are in lineage-prune.test.ts.

const sandboxes: string[] = [];
afterAll(() => {
  for (const sandbox of sandboxes) rmSync(sandbox, { recursive: true, force: true });
});

function sandbox(): { root: string; location: string } {
  const root = mkdtempSync(join(tmpdir(), 'crewline-json-settled-claim-'));
  sandboxes.push(root);
  return { root, location: join(root, 'checkpoints') };
}

const request = (owner: string): LeaseRequest => ({
  lineageId: 'state-x',
  owner,
  checkpointId: null,
  holder: `flow X, ${owner}`,
  ttlMs: 20_000,
});

function writeIn(provider: JsonProvider, location: string, lineageId: string, branch?: string) {
  return provider.write(
    location,
    buildCheckpointWrite({ metadata: { lineageId, parentId: null, ...(branch ? { branch } : {}) } }),
  );
}

async function claimAndRelease(provider: JsonProvider, location: string, owner: string): Promise<void> {
  await provider.claimLease(location, request(owner));
  await provider.releaseLease(location, { lineageId: 'state-x', owner });
}

/** Past the 3 s after which a listing is trusted by the prune. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 3_500));

/** Sets the times of `directory` and every directory in it an hour back. */
function setTimesBack(directory: string): void {
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(directory, hourAgo, hourAgo);
  for (const entry of readdirSync(directory, { withFileTypes: true }))
    if (entry.isDirectory()) setTimesBack(join(directory, entry.name));
}

describe.concurrent('the claim of a lineage as new, after its listings settled', () => {
  it.each(['main', 'flow-states/report-1', 'new/deep/branch'])(
    'sees a checkpoint another process wrote on %s, with every directory set an hour back',
    async (branch) => {
      const { location } = sandbox();
      const writer = new JsonProvider({ fsync: false });
      const claimer = new JsonProvider({ fsync: false });
      for (let index = 0; index < 5; index += 1) await writeIn(writer, location, randomUUID());
      await writeIn(writer, location, randomUUID(), 'flow-states/report-1');
      await claimAndRelease(claimer, location, 'A');
      await settle();
      await claimAndRelease(claimer, location, 'B');
      const stored = await writeIn(writer, location, 'state-x', branch);
      setTimesBack(location);
      await expect(claimer.claimLease(location, request('C'))).rejects.toMatchObject({
        code: 'conflict',
        details: { headId: stored.id },
      });
    },
    20_000,
  );

  it('sees a branch directory moved in from a backup with old times', async () => {
    const { root, location } = sandbox();
    const writer = new JsonProvider({ fsync: false });
    const claimer = new JsonProvider({ fsync: false });
    const backup = join(root, 'backup');
    for (let index = 0; index < 5; index += 1)
      await writeIn(writer, location, randomUUID(), 'flow-states/report-1');
    const stored = await writeIn(writer, backup, 'state-x', 'flow-states/report-1');
    await claimAndRelease(claimer, location, 'A');
    await settle();
    await claimAndRelease(claimer, location, 'B');
    rmSync(join(location, 'flow-states', 'report-1'), { recursive: true });
    renameSync(join(backup, 'flow-states', 'report-1'), join(location, 'flow-states', 'report-1'));
    setTimesBack(join(location, 'flow-states'));
    await expect(claimer.claimLease(location, request('C'))).rejects.toMatchObject({
      code: 'conflict',
      details: { headId: stored.id },
    });
  }, 20_000);
});
