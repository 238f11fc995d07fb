import { CrewlineError } from '@crewline/events';
import {
  costOfOneMoreCheckpoint,
  growingRun,
  listedSizeMismatches,
} from '@crewline/provider-testkit/fixtures';
import { type CheckpointMetadata, createCheckpointWrite, encodeValue } from '@crewline/runtime-state';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { useRecordingDatabases } from './test-support/recording-database.js';

const setup = useRecordingDatabases();

/** Bytes of content stored (event lines and chunk bodies), straight from the tables. */
function contentBytes(location: string): number {
  const db = new Database(location, { readonly: true });
  try {
    const events = db.prepare('SELECT coalesce(sum(length(body)), 0) FROM events').pluck().get() as number;
    const chunks = db.prepare('SELECT coalesce(sum(length(body)), 0) FROM chunks').pluck().get() as number;
    const heads = db
      .prepare('SELECT coalesce(sum(length(head)), 0) FROM checkpoints')
      .pluck()
      .get() as number;
    return events + chunks + heads;
  } finally {
    db.close();
  }
}

describe('incremental storage', () => {
  it('reads every checkpoint back byte for byte, with sizeBytes equal to its text', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 8, outputBytes: 700 });
    for (let index = 0; index < 30; index += 1) {
      const trigger = run.step();
      if (index % 2 === 0) run.state.writeCheckpointSync({ trigger });
      else await run.state.writeCheckpoint({ trigger });
    }
    expect(await provider.mismatches(location)).toEqual([]);
    expect(await listedSizeMismatches(provider, location, provider.written)).toEqual([]);
  });

  it('one more event costs about that event, not the history or the unchanged entities', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 40, outputBytes: 1000 });
    for (let index = 0; index < 90; index += 1) run.state.writeCheckpointSync({ trigger: run.step() });
    // Step 91 starts a task: a small event and a status change.
    const { stored, addedBytes, eventBytes } = await costOfOneMoreCheckpoint(
      run,
      () => contentBytes(location),
      { sync: true },
    );
    expect(stored.sizeBytes).toBeGreaterThan(100_000);
    // The new event, the changed task and its ancestors; nothing proportional to the document.
    expect(addedBytes).toBeLessThan(eventBytes + 1500);
  });

  it('grows linearly with the events written, not quadratically', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 60, outputBytes: 1000 });
    const totals: number[] = [];
    let everyDocument = 0;
    for (let index = 1; index <= 180; index += 1) {
      everyDocument += run.state.writeCheckpointSync({ trigger: run.step() }).sizeBytes ?? 0;
      if (index % 60 === 0) totals.push(contentBytes(location));
    }
    const [first, second, third] = totals as [number, number, number];
    // Each third of the run adds about the same (it writes the same kind of events); rewriting
    // the history would make the last third cost ~5 times the first.
    expect((third - second) / first).toBeLessThan(1.5);
    expect((second - first) / first).toBeLessThan(1.5);
    // All 180 documents add up to ~60 times what is stored.
    expect(third).toBeLessThan(everyDocument / 20);
    const final = (await provider.latest(location))!.sizeBytes!;
    expect(third).toBeLessThan(2 * final);
  });

  it('keeps the database file within 3× the final checkpoint on a crew-like run', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 40, outputBytes: 2000 });
    for (let index = 0; index < 120; index += 1) run.state.writeCheckpointSync({ trigger: run.step() });
    const stats = (await provider.stats(location))!;
    const final = (await provider.latest(location))!.sizeBytes!;
    expect(stats.pageCount * stats.pageSize).toBeLessThan(3 * final);
  });

  it("names its parent's root chunk when the head did not change, and stores the next change", async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 4, outputBytes: 300 });
    const ids: string[] = [];
    ids.push(run.state.writeCheckpointSync({ trigger: run.step() }).id);
    // No entity changed since: the same head (as after a model call starts).
    ids.push(run.state.writeCheckpointSync({ trigger: 'manual' }).id);
    // The very objects of the last head, changed in place: the next checkpoint must hold the change.
    run.crew.progress.step += 100;
    ids.push(run.state.writeCheckpointSync({ trigger: 'manual' }).id);
    ids.push(run.state.writeCheckpointSync({ trigger: 'manual' }).id);
    const heads = () => {
      const db = new Database(location, { readonly: true });
      try {
        return ids.map((id) => db.prepare('SELECT head FROM checkpoints WHERE id = ?').pluck().get(id));
      } finally {
        db.close();
      }
    };
    const [first, second, third, fourth] = heads();
    expect(second).toBe(first);
    expect(third).not.toBe(first);
    expect(fourth).toBe(third);
    expect(await provider.mismatches(location)).toEqual([]);
    // The shared chunk outlives the checkpoint that stored it.
    expect(await provider.delete(location, ids[0]!)).toBe(true);
    await provider.collectGarbage(location);
    expect(await provider.mismatches(location, ids.slice(1))).toEqual([]);
  });

  it('keeps metadata in another key order, or with more keys, byte for byte', async () => {
    const { provider, location } = setup();
    const run = growingRun({ tasks: 2 });
    const written: CheckpointMetadata[] = [];
    const write = (reshape: (metadata: CheckpointMetadata) => CheckpointMetadata) => {
      run.step();
      const { metadata, entities } = run.state.snapshot('manual');
      const parentId = written.at(-1)?.id ?? null;
      const reshaped = reshape({ ...metadata, parentId });
      provider.writeSync(
        location,
        createCheckpointWrite({
          metadata: reshaped,
          inputs: encodeValue(run.state.inputs),
          entities,
          events: run.state.events.slice(),
          parentEventCount: written.at(-1)?.eventCount ?? 0,
        }),
      );
      written.push(reshaped);
    };
    write((metadata) => metadata);
    write(({ id, ...rest }) => ({ ...rest, id }));
    write((metadata) => ({ ...metadata, note: 'kept' }) as CheckpointMetadata);
    write((metadata) => metadata);
    expect(Object.keys(written[1]!)[0]).not.toBe('id');
    expect(provider.written.size).toBe(4);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('refuses an invalid branch or parent id right after valid ones', () => {
    const { provider, location } = setup();
    const run = growingRun({ tasks: 2 });
    run.step();
    const { metadata, entities } = run.state.snapshot('manual');
    const attempt = (changes: Partial<CheckpointMetadata>) => {
      try {
        provider.writeSync(
          location,
          createCheckpointWrite({
            metadata: { ...metadata, ...changes },
            inputs: encodeValue(run.state.inputs),
            entities,
            events: run.state.events.slice(),
            parentEventCount: 0,
          }),
        );
        return 'written';
      } catch (error) {
        return CrewlineError.hasCode(error, 'invalid_name') ? 'invalid_name' : String(error);
      }
    };
    expect(attempt({ id: `${metadata.id}-0`, parentId: '' })).toBe('invalid_name');
    expect(attempt({ parentId: null })).toBe('written');
    expect(attempt({ id: `${metadata.id}-2`, parentId: metadata.id })).toBe('written');
    expect(attempt({ id: `${metadata.id}-3`, branch: '' })).toBe('invalid_name');
    expect(attempt({ id: `${metadata.id}-4`, branch: '../escape' })).toBe('invalid_name');
    expect(attempt({ id: `${metadata.id}-5`, parentId: '../escape' })).toBe('invalid_name');
    expect(attempt({ id: '' })).toBe('invalid_name');
    expect(attempt({ id: `${metadata.id}-6`, parentId: '' })).toBe('invalid_name');
  });
});
