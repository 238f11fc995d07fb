// A checkpoint under an id the location already holds, beyond what the conformance suite asks: the
// id known only from the index another provider (process) wrote, a retried write, a group with
// a stored or repeated id, a file removed by hand, and a lineage lock handed over.
import { mkdtempSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import { type CheckpointWrite, createCheckpointWrite } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonProvider } from '../json-provider.js';

/** The test's own directory; `location` is in it (a test may move to a fresh one, see below). */
let sandbox: string;
let location: string;
const providers: JsonProvider[] = [];
function provider(): JsonProvider {
  const created = new JsonProvider({ fsync: false });
  providers.push(created);
  return created;
}
beforeEach(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'crewline-json-stored-ids-'));
  location = join(sandbox, 'checkpoints');
});
afterEach(async () => {
  for (const created of providers.splice(0)) await created.close();
  rmSync(sandbox, { recursive: true, force: true });
});

/** `write` under `id`, its document saying so too. */
function underId(write: CheckpointWrite, id: string, changes: Partial<CheckpointWrite['metadata']> = {}) {
  return createCheckpointWrite({
    metadata: { ...write.metadata, ...changes, id },
    inputs: write.document.inputs,
    entities: write.document.entities,
    events: write.document.events,
    parentEventCount: write.parentEventCount,
  });
}

function checkpointFiles(): string[] {
  return readdirSync(join(location, 'main')).filter((name) => !name.startsWith('.'));
}

async function conflictOf(writing: Promise<unknown> | (() => unknown)): Promise<CrewlineError> {
  const error = await (typeof writing === 'function' ? Promise.resolve().then(writing) : writing).then(
    () => expect.fail('the write was accepted'),
    (caught: unknown) => caught,
  );
  expect(CrewlineError.hasCode(error, 'conflict'), String(error)).toBe(true);
  return error as CrewlineError;
}

describe('JsonProvider and ids already stored', () => {
  it("refuses a checkpoint under an id another provider's index names (another process)", async () => {
    const run = growingRun({ tasks: 2 });
    const [root, child] = nextWrites(run, 2);
    const first = provider();
    await first.write(location, root!);
    // Its index entries are written once close() resolves: what another process then reads.
    await first.close();
    const second = provider();
    const error = await conflictOf(second.write(location, underId(child!, root!.metadata.id)));
    expect(error.details).toEqual({ duplicateId: root!.metadata.id });
    expect(error.message).toContain(location);
    const sync = await conflictOf(() => second.writeSync(location, underId(child!, root!.metadata.id)));
    expect(sync.details).toEqual({ duplicateId: root!.metadata.id });
    expect(checkpointFiles()).toEqual([`${root!.metadata.id}_p-none.json`]);
  });

  it('a retried write of the same checkpoint gets it back without writing it again; one with other content under the same name is refused', async () => {
    const [root] = nextWrites(growingRun({ tasks: 2 }), 1);
    const writer = provider();
    const stored = await writer.write(location, root!);
    const path = join(location, 'main', checkpointFiles()[0]!);
    const written = statSync(path).mtimeMs;
    expect(await writer.write(location, root!)).toEqual(stored);
    expect(writer.writeSync(location, root!)).toEqual(stored);
    expect(statSync(path).mtimeMs).toBe(written);
    // Same id, same parent (so the same file name), another event count: not the same checkpoint.
    const other = underId(root!, root!.metadata.id, { eventCount: root!.metadata.eventCount + 1 });
    expect((await conflictOf(writer.write(location, other))).details).toEqual({
      duplicateId: root!.metadata.id,
    });
    expect(checkpointFiles()).toHaveLength(1);
    expect((await writer.list(location))[0]).toEqual(stored);
  });

  it('a group holding a stored checkpoint, even the very same, or one id twice, writes nothing; written one by one, as the runtime then does, each gets its outcome', async () => {
    const run = growingRun({ tasks: 2 });
    const [root] = nextWrites(run, 1);
    const writer = provider();
    await writer.write(location, root!);
    const [child, grandchild] = nextWrites(run, 2, root);
    const again = await conflictOf(writer.writeBatch(location, [child!, root!]));
    expect(again.details).toEqual({ duplicateId: root!.metadata.id });
    expect(again.message).toMatch(/none of the group of 2 was written.*one by one with write\(\)/);
    const twice = await conflictOf(
      writer.writeBatch(location, [child!, underId(grandchild!, child!.metadata.id)]),
    );
    expect(twice.details).toEqual({ duplicateId: child!.metadata.id });
    expect(twice.message).toContain('appears twice in the group');
    expect(checkpointFiles()).toHaveLength(1);
    // The runtime's fallback after a refused group (runtime-state's #writeGroup).
    await writer.write(location, child!);
    await writer.write(location, root!);
    await conflictOf(writer.write(location, underId(grandchild!, root!.metadata.id)));
    expect((await writer.list(location)).map((stored) => stored.id)).toEqual([
      root!.metadata.id,
      child!.metadata.id,
    ]);
  });

  it('two writes of one id in flight at once: one is stored, the other refused (one file under the id)', async () => {
    const run = growingRun({ tasks: 2 });
    const [root, child, grandchild] = nextWrites(run, 3);
    const json = provider();
    const outcomes = async (writes: Promise<unknown>[]) => {
      const settled = await Promise.allSettled(writes);
      const refused = settled.filter((outcome) => outcome.status === 'rejected');
      expect(refused, 'exactly one refused').toHaveLength(1);
      await conflictOf(Promise.reject((refused[0] as PromiseRejectedResult).reason));
    };
    // Two writes, the second under the first's id with another parent (another file name).
    await outcomes([json.write(location, root!), json.write(location, underId(child!, root!.metadata.id))]);
    expect(checkpointFiles().filter((name) => name.startsWith(root!.metadata.id))).toHaveLength(1);
    // A group and a write beside it.
    await outcomes([
      json.writeBatch(location, [child!]),
      json.write(location, underId(grandchild!, child!.metadata.id)),
    ]);
    expect(checkpointFiles().filter((name) => name.startsWith(child!.metadata.id))).toHaveLength(1);
  });

  it('writeSync of another checkpoint under an id an async write holds is refused; the very same one is written', async () => {
    const run = growingRun({ tasks: 2 });
    const [root, child] = nextWrites(run, 2);
    const json = provider();
    // After any number of turns of the event loop, the async write has not reached the id yet (the
    // synchronous one is stored, the async one refused), holds it, or is done (the synchronous one
    // refused): never both.
    const clash = underId(child!, root!.metadata.id);
    for (let turns = 0; turns < 6; turns += 1) {
      // A fresh location each time, not the last one removed: the provider may still be making a
      // spare temp file ahead in it, which a removal meets (ENOTEMPTY).
      location = join(sandbox, `turn-${turns}`);
      const pending = json.write(location, root!).then(
        () => 'stored',
        (error: unknown) => (CrewlineError.hasCode(error, 'conflict') ? 'refused' : String(error)),
      );
      for (let turn = 0; turn < turns; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      let synchronous: string;
      try {
        json.writeSync(location, clash);
        synchronous = 'stored';
      } catch (error) {
        synchronous = CrewlineError.hasCode(error, 'conflict') ? 'refused' : String(error);
      }
      const outcomes = [await pending, synchronous].sort();
      expect(outcomes, `after ${turns} turns`).toEqual(['refused', 'stored']);
      expect(checkpointFiles().filter((name) => name.startsWith(root!.metadata.id))).toHaveLength(1);
    }
    // The very same checkpoint written synchronously while its async write is in flight (as the
    // runtime's strict checkpoint writes those queued ahead of it): one file.
    location = join(sandbox, 'same-checkpoint');
    const pending = json.write(location, root!);
    await new Promise((resolve) => setImmediate(resolve));
    expect(json.writeSync(location, root!).id).toBe(root!.metadata.id);
    await pending;
    expect(checkpointFiles()).toEqual([`${root!.metadata.id}_p-none.json`]);
  });

  it('an id whose file was removed by hand is free again', async () => {
    const run = growingRun({ tasks: 2 });
    const [root, child] = nextWrites(run, 2);
    const writer = provider();
    await writer.write(location, root!);
    await writer.close();
    unlinkSync(join(location, 'main', checkpointFiles()[0]!));
    const replacement = underId(child!, root!.metadata.id, { parentId: null });
    await writer.write(location, replacement);
    expect((await writer.list(location)).map((stored) => [stored.id, stored.eventCount])).toEqual([
      [root!.metadata.id, child!.metadata.eventCount],
    ]);
  });

  it('a lineage lock is released, at once, with its holder’s index entries written: the next holder sees its ids', async () => {
    const run = growingRun({ tasks: 2 });
    const [root, child] = nextWrites(run, 2);
    const holder = provider();
    const lease = await holder.claimLease(location, {
      lineageId: root!.metadata.lineageId,
      owner: 'holder',
      checkpointId: null,
      holder: 'crew Growing, holder',
      ttlMs: 10_000,
    });
    await holder.write(location, { ...root!, lease: { lineageId: lease.lineageId, owner: lease.owner } });
    // Not awaited, as when a signal ends the process: the release is complete once it is called.
    const releasing = holder.releaseLease(location, { lineageId: lease.lineageId, owner: lease.owner });
    // Another process (a provider of its own) continues at once.
    const next = provider();
    const claimed = next.claimLease(location, {
      lineageId: root!.metadata.lineageId,
      owner: 'next',
      checkpointId: root!.metadata.id,
      holder: 'crew Growing, next',
      ttlMs: 10_000,
    });
    const error = await conflictOf(next.write(location, underId(child!, root!.metadata.id)));
    expect(error.details).toEqual({ duplicateId: root!.metadata.id });
    await expect(claimed).resolves.toMatchObject({ owner: 'next' });
    await releasing;
  });
});
