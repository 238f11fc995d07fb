import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { type CheckpointableEntity, RuntimeState } from '@crewline/runtime-state';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { timeCheckpoints } from './checkpoint-timing.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  vi.restoreAllMocks();
});

/**
 * A clock that stands still unless told to move: the times charged are then exact, whatever the
 * machine's load (no bound on real time in a test).
 */
function manualClock(): { advance: (milliseconds: number) => void } {
  let now = 0;
  vi.spyOn(performance, 'now').mockImplementation(() => now);
  return {
    advance: (milliseconds) => {
      now += milliseconds;
    },
  };
}

/** A run whose one entity holds `text`; taking a checkpoint while `slow` is set takes 200 ms of `clock`. */
function run(options: { groupCommit: boolean; clock?: { advance: (milliseconds: number) => void } }) {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-timing-'));
  const provider = new SqliteProvider({ maxCheckpointBytes: 20_000, groupCommit: options.groupCommit });
  cleanups.push(() => {
    provider.close();
    rmSync(directory, { recursive: true, force: true });
  });
  const entity = { text: 'short', slow: false };
  const agent: CheckpointableEntity = {
    entityKind: 'agent',
    entityId: 'writer',
    entityName: 'writer',
    snapshotEntity: () => {
      if (entity.slow) options.clock?.advance(200);
      return { kind: 'agent', id: 'writer', name: 'writer', data: { text: entity.text } };
    },
    summarizeEntity: () => ({ kind: 'agent', id: 'writer', name: 'writer' }),
  };
  const state = new RuntimeState({ entities: [agent], provider, location: join(directory, 'run.db') });
  return { provider, state, entity };
}

describe('timeCheckpoints', () => {
  it('charges each stored checkpoint its own time: a failed one shifts nothing', () => {
    const { provider, state, entity } = run({ groupCommit: false, clock: manualClock() });
    const timing = timeCheckpoints(provider);
    try {
      const first = state.writeCheckpointSync({ trigger: 'first' });
      // Slow to take, then refused (too large): its 200 ms belong to no stored checkpoint.
      Object.assign(entity, { slow: true, text: 'x'.repeat(30_000) });
      expect(() => state.writeCheckpointSync({ trigger: 'refused' })).toThrow(/maxCheckpointBytes/);
      Object.assign(entity, { slow: false, text: 'short again' });
      const third = state.writeCheckpointSync({ trigger: 'third' });
      const times = timing.times();
      expect(times.ids).toEqual([first.id, third.id]);
      expect(times.groupSizes).toEqual([1, 1]);
      // The clock moved only while the refused checkpoint was taken: its 200 ms, which a pairing by
      // position gave the third, belong to no stored checkpoint.
      expect(times.endToEndMs).toEqual([0, 0]);
      expect(times.providerMs).toEqual([0, 0]);
    } finally {
      timing.stop();
    }
  });

  it('splits a group commit among its checkpoints and reports the commit whole', async () => {
    const { provider, state } = run({ groupCommit: true });
    const timing = timeCheckpoints(provider);
    try {
      const writes = ['a', 'b', 'c'].map((trigger) => state.writeCheckpoint({ trigger }));
      await state.durable();
      const stored = await Promise.all(writes);
      const times = timing.times();
      expect(times.ids).toEqual(stored.map((checkpoint) => checkpoint.id));
      expect(times.groupSizes).toEqual([3]);
      const shares = times.providerMs.reduce((sum, share) => sum + share, 0);
      expect(shares).toBeCloseTo(times.commitMs[0]!, 6);
    } finally {
      timing.stop();
    }
  });
});
