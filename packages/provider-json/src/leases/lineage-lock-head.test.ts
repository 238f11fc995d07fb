import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import type { LeaseRequest } from '@crewline/runtime-state';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { JsonProvider } from '../json-provider.js';

/** Runs once, right after the next directory walk of a location returns (a claim reading the head). */
let afterNextWalk: (() => Promise<void>) | undefined;

vi.mock('../read/directory-walk.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../read/directory-walk.js')>();
  return {
    ...actual,
    walkLocation: async (...parameters: Parameters<typeof actual.walkLocation>) => {
      const walked = await actual.walkLocation(...parameters);
      const hook = afterNextWalk;
      afterNextWalk = undefined;
      await hook?.();
      return walked;
    },
  };
});

let sandbox: string;
let location: string;
const provider = new JsonProvider({ fsync: false });
const request = (owner: string, checkpointId: string | null): LeaseRequest => ({
  lineageId: 'run-1',
  owner,
  checkpointId,
  holder: `crew Research, ${owner}`,
  ttlMs: 20_000,
});
const writeInRun = (parentId: string | null, lease?: { lineageId: string; owner: string }) =>
  provider.write(location, {
    ...buildCheckpointWrite({ metadata: { lineageId: 'run-1', parentId } }),
    ...(lease ? { lease } : {}),
  });

beforeEach(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'crewline-json-lock-head-'));
  location = join(sandbox, 'checkpoints');
});
afterEach(() => {
  afterNextWalk = undefined;
  rmSync(sandbox, { recursive: true, force: true });
});

it('a claim whose head moves while it is being read is refused: the lock is taken before the head is read', async () => {
  // B reads the head (P); holder A writes C, the child of P, and its run ends (release); B then
  // found no lock and a head check against what it had read: it was granted P, and paid again for
  // everything after P on a second head (review demo json-head-toctou.ts, 1 in 60 before).
  const P = await writeInRun(null);
  const holder = { lineageId: 'run-1', owner: 'A' };
  await provider.claimLease(location, request('A', P.id));
  let C: { id: string } | undefined;
  const holderWritesAndEnds = async () => {
    C = await writeInRun(P.id, holder);
    await provider.releaseLease(location, holder);
  };
  afterNextWalk = holderWritesAndEnds;
  const claimOfB = provider.claimLease(location, request('B', P.id));
  await expect(claimOfB).rejects.toMatchObject({ code: 'conflict' });
  // Refused because A held the lock; A goes on, writes and ends: B is then refused for the moved head.
  if (afterNextWalk !== undefined) {
    afterNextWalk = undefined;
    await holderWritesAndEnds();
  }
  await expect(provider.claimLease(location, request('B', P.id))).rejects.toMatchObject({
    code: 'conflict',
    details: { lineageId: 'run-1', headId: C!.id },
  });
  // The refused claims left no lock behind: the head itself can be continued at once.
  await expect(provider.claimLease(location, request('D', C!.id))).resolves.toMatchObject({ owner: 'D' });
});
