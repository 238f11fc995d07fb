import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import type { LeaseRequest, LeaseToken } from '@crewline/runtime-state';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { JsonProvider } from '../json-provider.js';
import { LocationReader } from '../read/location-reader.js';

// A claim of a new lineage (checkpointId null) is what a run makes before its first checkpoint. A
// @persist() flow kicked off by its state id starts its lineage under an id derived from flow name
// and state id, so two processes kicking off the same new state claim the same lineage: the second
// must be refused once the first has stored checkpoints, or it runs (and pays for) the state again.

let sandbox: string;
let location: string;
/** Two providers: two processes sharing one location (nothing is remembered between them). */
const first = new JsonProvider({ fsync: false });
const second = new JsonProvider({ fsync: false });
const request = (lineageId: string, owner: string, checkpointId: string | null): LeaseRequest => ({
  lineageId,
  owner,
  checkpointId,
  holder: `flow Billing, ${owner}`,
  ttlMs: 20_000,
});
const writeIn = (
  provider: JsonProvider,
  lineageId: string,
  parentId: string | null,
  options: { lease?: LeaseToken; branch?: string } = {},
) =>
  provider.write(location, {
    ...buildCheckpointWrite({
      metadata: { lineageId, parentId, ...(options.branch ? { branch: options.branch } : {}) },
    }),
    ...(options.lease ? { lease: options.lease } : {}),
  });

beforeEach(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'crewline-json-lock-new-'));
  location = join(sandbox, 'checkpoints');
});
afterEach(() => {
  rmSync(sandbox, { recursive: true, force: true });
});

it('refuses a claim of a new lineage that another process has run meanwhile, naming its head', async () => {
  // Process A kicks off state "invoice-7" (its lineage id is derived from it), runs it to the end
  // and releases its lock; process B, which looked for the state's saves before A wrote any, then
  // claims the same lineage as new.
  const lease = { lineageId: 'state-invoice-7', owner: 'A' };
  await first.claimLease(location, request('state-invoice-7', 'A', null));
  const start = await writeIn(first, 'state-invoice-7', null, { lease });
  const end = await writeIn(first, 'state-invoice-7', start.id, { lease });
  await first.releaseLease(location, lease);

  await expect(second.claimLease(location, request('state-invoice-7', 'B', null))).rejects.toMatchObject({
    code: 'conflict',
    message: expect.stringContaining(`already has checkpoints (its head is "${end.id}")`),
    details: { lineageId: 'state-invoice-7', headId: end.id },
  });
  // The refusal left no lock behind: the head can be continued at once (a resume).
  await expect(second.claimLease(location, request('state-invoice-7', 'B', end.id))).resolves.toMatchObject({
    owner: 'B',
  });
});

it('refuses it in the process that wrote them too, and finds a lineage stored on another branch', async () => {
  const other = await writeIn(first, 'other-run', null);
  const forked = await writeIn(first, 'forked-run', other.id, { branch: 'experiment' });
  await writeIn(first, 'other-run', other.id);
  await expect(first.claimLease(location, request('forked-run', 'again', null))).rejects.toMatchObject({
    code: 'conflict',
    details: { lineageId: 'forked-run', headId: forked.id },
  });
});

it('grants a claim of a new lineage nobody wrote to, beside other runs, and a claim of a head (a resume)', async () => {
  // A location that does not exist yet: a first run.
  await expect(first.claimLease(location, request('fresh-1', 'A', null))).resolves.toMatchObject({
    lineageId: 'fresh-1',
    owner: 'A',
  });
  const lease = { lineageId: 'fresh-1', owner: 'A' };
  const head = await writeIn(first, 'fresh-1', null, { lease });
  await first.releaseLease(location, lease);
  await writeIn(first, 'other-run', null);
  await expect(second.claimLease(location, request('fresh-2', 'B', null))).resolves.toMatchObject({
    lineageId: 'fresh-2',
    owner: 'B',
  });
  await expect(second.claimLease(location, request('fresh-1', 'C', head.id))).resolves.toMatchObject({
    owner: 'C',
  });
  // The same owner claiming its new lineage again before it stored anything (its lease's deadline
  // passed) keeps it.
  await expect(second.claimLease(location, request('fresh-2', 'B', null))).resolves.toMatchObject({
    owner: 'B',
  });
});

it('refuses a claim of a checkpoint of another lineage, naming the claimed lineage’s own head', async () => {
  // Granted before: the checkpoint was found by id and nothing of the claimed lineage came after it.
  const elsewhere = await writeIn(first, 'other-run', null);
  await expect(second.claimLease(location, request('empty-run', 'B', elsewhere.id))).rejects.toMatchObject({
    code: 'conflict',
    details: { lineageId: 'empty-run', headId: null },
  });
  const own = await writeIn(first, 'own-run', null);
  await expect(second.claimLease(location, request('own-run', 'B', elsewhere.id))).rejects.toMatchObject({
    code: 'conflict',
    details: { lineageId: 'own-run', headId: own.id },
  });
  await expect(second.claimLease(location, request('own-run', 'B', own.id))).resolves.toMatchObject({
    owner: 'B',
  });
});

it("claims a fresh run's random lineage without reading the location's files (only a named lineage can have checkpoints yet)", async () => {
  for (let index = 0; index < 3; index += 1) await writeIn(first, randomUUID(), null);
  const newest = vi.spyOn(LocationReader.prototype, 'newestOf');
  try {
    const lineageId = randomUUID();
    await second.claimLease(location, request(lineageId, 'B', null));
    await second.releaseLease(location, { lineageId, owner: 'B' });
    expect(newest).not.toHaveBeenCalled();
  } finally {
    newest.mockRestore();
  }
});

it('claims a named lineage that has no checkpoint again reading only the files written since (a nested @persist() kickoff claims its state each time)', async () => {
  // Each nested kickoff of a @persist() flow claims its state's lineage as new while its saves go to
  // the outer run's lineage: every claim read the head of every file, 200 kickoffs of a flow took
  // 7.5 s instead of 0.6 s. What a claim read is kept by file name; files are never rewritten.
  for (let index = 0; index < 30; index += 1) await writeIn(first, randomUUID(), null);
  const examined = vi.spyOn(LocationReader.prototype, 'examine');
  const claimAndRelease = async (owner: string) => {
    examined.mockClear();
    await second.claimLease(location, request('state-report-1', owner, null));
    await second.releaseLease(location, { lineageId: 'state-report-1', owner });
    return examined.mock.calls.length;
  };
  try {
    expect(await claimAndRelease('A')).toBe(30);
    expect(await claimAndRelease('B')).toBe(0);
    // Another process writes two more (on a new branch too): only those are read.
    const parent = await writeIn(first, 'other-run', null);
    await writeIn(first, 'other-fork', parent.id, { branch: 'experiment' });
    expect(await claimAndRelease('C')).toBe(2);
    // Another process stores a checkpoint of the lineage: the next claim of it as new is refused.
    const stored = await writeIn(first, 'state-report-1', null, { branch: 'flow-states/report-1' });
    examined.mockClear();
    await expect(second.claimLease(location, request('state-report-1', 'D', null))).rejects.toMatchObject({
      code: 'conflict',
      details: { lineageId: 'state-report-1', headId: stored.id },
    });
    expect(examined.mock.calls.length).toBe(1);
  } finally {
    examined.mockRestore();
  }
});
