// What a resume of an older checkpoint does in a store without leases (a third-party provider that
// declares none), as the root README and the provider-testkit README tell plugin authors: it cannot
// claim the run's head, but it still moves to a new branch, as in a store with leases, with the same
// warning; nothing stored is changed. Found by a trial: it continued the checkpoint's own branch
// beside the later checkpoints (a second chain on main), where the README promised a new branch.
import { type LogRecord, setLogSink } from '@crewline/events';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Crew } from '../crew/crew.js';
import { lookupTool, threeTaskCrew, toolUsingModel } from '../e2e/support/fixtures.js';
import { registerProject } from '../project-config/project-config.js';

/** The in-memory provider without its leases: what a provider that fences nothing looks like. */
function providerWithoutLeases(): CheckpointProvider {
  const provider = new InMemoryProvider();
  Object.defineProperty(provider, 'capabilities', {
    value: { ...provider.capabilities, leases: false },
  });
  for (const method of ['claimLease', 'renewLease', 'releaseLease'])
    Object.defineProperty(provider, method, { value: undefined });
  return provider;
}

let records: LogRecord[];
beforeEach(() => {
  registerProject({ tools: { lookup: lookupTool } });
  records = [];
  setLogSink((record) => records.push(record));
});
afterEach(() => setLogSink(null));

describe('resuming an older checkpoint in a store without leases', () => {
  it('moves to a new branch, with the warning the stores with leases give', async () => {
    const provider = providerWithoutLeases();
    const location = 'runs';
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location, provider } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const before = await provider.list(location);
    const first = before[0]!;
    const newest = before.at(-1)!;
    const restored = await Crew.fromCheckpoint({
      restoreFrom: `${location}#${first.id}`,
      location,
      provider,
    });
    await restored.kickoff();
    const warning = records.find((record) => record.message.includes('is not the latest of its run'));
    expect(warning?.message).toContain(
      `checkpoint ${first.id} is not the latest of its run (${newest.id} is)`,
    );
    const after = await provider.list(location);
    for (const checkpoint of before) expect(after.map((listed) => listed.id)).toContain(checkpoint.id);
    const added = after.filter((listed) => !before.some((earlier) => earlier.id === listed.id));
    expect(added.length).toBeGreaterThan(0);
    const branches = new Set(added.map((listed) => listed.branch));
    expect(branches.size).toBe(1);
    expect([...branches][0]).toMatch(/^fork\//);
    expect(added.find((listed) => listed.parentId === first.id)).toBeDefined();
  });

  it('continues the latest checkpoint of its run on its own branch, even with another run later on that branch', async () => {
    const provider = providerWithoutLeases();
    const location = 'runs';
    const first = threeTaskCrew(toolUsingModel(), { checkpoint: { location, provider } }).crew;
    await first.kickoff({ inputs: { topic: 'AI' } });
    // The run as if interrupted before its last task: its newest checkpoint has work left.
    const written = await provider.list(location);
    await provider.delete(location, written.at(-1)!.id);
    const latestOfFirst = written.at(-2)!;
    // A second, unrelated run on branch main of the same location.
    await threeTaskCrew(toolUsingModel(), { checkpoint: { location, provider } }).crew.kickoff({
      inputs: { topic: 'ML' },
    });
    const before = await provider.list(location);
    const restored = await Crew.fromCheckpoint({
      restoreFrom: `${location}#${latestOfFirst.id}`,
      location,
      provider,
    });
    await restored.kickoff();
    expect(records.filter((record) => record.level === 'warn')).toEqual([]);
    const added = (await provider.list(location)).filter(
      (listed) => !before.some((earlier) => earlier.id === listed.id),
    );
    expect(new Set(added.map((listed) => listed.branch))).toEqual(new Set([latestOfFirst.branch]));
  });
});
