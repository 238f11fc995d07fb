// A completed crew forked in code (Crew.fork, then kickoff) writes its end on the new branch, naming
// the checkpoint it was forked from as its parent (the fork's documented first checkpoint), as a flow
// forked at its finished end does. A resume at the completed end writes nothing
// (src/restore/resume-completed-run.test.ts): only a fork has a branch to start.
import { type BaseEvent, EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { recordEvents, threeTaskCrew, toolUsingModel } from '../e2e/support/fixtures.js';
import { captureLogs, type LogCapture } from '../testing/capture-logs.js';
import { Crew } from './crew.js';

let logs: LogCapture | undefined;
afterEach(() => logs?.stop());

const location = 'mem';
const typesOf = (events: readonly BaseEvent[]) => events.map((event) => event.type);

describe('Crew.fork of a completed crew', () => {
  it('writes crew_kickoff_completed on the new branch, its parent the checkpoint forked from', async () => {
    const provider = new InMemoryProvider();
    const onEvents = ['task_completed' as const, 'crew_kickoff_completed' as const];
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location, provider, onEvents } });
    const first = await crew.kickoff({ inputs: { topic: 'AI' } });
    const saved = await provider.list(location);

    const fork = await Crew.fork({ restoreFrom: location, provider }, { branch: 'experiment' });
    const bus = new EventBus();
    const events = recordEvents(bus);
    const output = await fork.kickoff({ bus });
    expect(output.raw).toBe(first.raw);
    expect(typesOf(events)).not.toContain('crew_kickoff_started');
    expect(typesOf(events).filter((type) => type === 'crew_kickoff_completed')).toHaveLength(1);
    const added = (await provider.list(location)).slice(saved.length);
    expect(added.map((checkpoint) => [checkpoint.trigger, checkpoint.branch])).toEqual([
      ['crew_kickoff_completed', 'experiment'],
    ]);
    expect(added[0]!.parentId).toBe(saved.at(-1)!.id);
    expect(fork.lastCheckpoint?.id).toBe(added[0]!.id);
    expect(fork.lastCheckpoint?.branch).toBe('experiment');
  });

  // An edit of the last task runs nothing after it: with the default onEvents the fork stored
  // nothing, its branch was never made, and the edit was kept only in memory, silently.
  it('says so when it ran nothing and stored nothing: the edit of the last task is not kept', async () => {
    const provider = new InMemoryProvider();
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location, provider } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const saved = await provider.list(location);

    const fork = await Crew.fork({ restoreFrom: location, provider }, { branch: 'shorter' });
    fork.setTaskOutput(2, 'A shorter review.');
    logs = captureLogs();
    await fork.kickoff({ bus: new EventBus() });
    expect(await provider.list(location)).toHaveLength(saved.length);
    const [warning] = logs.expect('wrote no checkpoint');
    expect(warning?.message).toContain('branch "shorter" was not made');
    expect(warning?.message).toContain('setTaskOutput');
    expect(logs.unexpected()).toEqual([]);
  });

  it('says nothing when the fork stored its end', async () => {
    const provider = new InMemoryProvider();
    const onEvents = ['task_completed' as const, 'crew_kickoff_completed' as const];
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location, provider, onEvents } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const fork = await Crew.fork({ restoreFrom: location, provider }, { branch: 'kept' });
    logs = captureLogs();
    await fork.kickoff({ bus: new EventBus() });
    expect(fork.lastCheckpoint?.branch).toBe('kept');
    expect(logs.unexpected()).toEqual([]);
  });

  it('says nothing when the fork does not checkpoint at all (checkpoint: false)', async () => {
    const provider = new InMemoryProvider();
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location, provider } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const fork = await Crew.fork({ restoreFrom: location, provider }, { branch: 'off' });
    fork.checkpoint = false;
    logs = captureLogs();
    await fork.kickoff({ bus: new EventBus() });
    expect(logs.unexpected()).toEqual([]);
  });
});
