// What a resume of an older checkpoint does in a store without leases (a third-party provider that
// declares none), as the root README and the provider-testkit README tell plugin authors: it cannot
// claim the run's head, so it continues the checkpoint's own branch beside the later checkpoints,
// with a warning that says so and names fork; nothing stored is changed.
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
  it('continues its branch beside the later checkpoints, with a warning naming fork', async () => {
    const provider = providerWithoutLeases();
    const location = 'runs';
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location, provider } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const before = await provider.list(location);
    const first = before[0]!;
    const restored = await Crew.fromCheckpoint({
      restoreFrom: `${location}#${first.id}`,
      location,
      provider,
    });
    await restored.kickoff();
    const warning = records.find((record) =>
      record.message.includes('is not the newest checkpoint of branch'),
    );
    expect(warning?.message).toContain('fork instead');
    const after = await provider.list(location);
    for (const checkpoint of before) expect(after.map((listed) => listed.id)).toContain(checkpoint.id);
    const added = after.filter((listed) => !before.some((earlier) => earlier.id === listed.id));
    expect(added.length).toBeGreaterThan(0);
    expect(new Set(added.map((listed) => listed.branch))).toEqual(new Set([first.branch]));
    expect(added.find((listed) => listed.parentId === first.id)).toBeDefined();
  });
});
