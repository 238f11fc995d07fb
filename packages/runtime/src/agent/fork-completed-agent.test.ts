// A completed standalone agent forked in code (Agent.fork, then kickoff) writes its end on the new
// branch, naming the checkpoint it was forked from as its parent, without a model call; a resume at
// the completed end writes nothing (resume-completed-agent.test.ts): only a fork has a branch to start.
import { type BaseEvent, EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { lookupTool, recordEvents, toolUsingModel } from '../e2e/support/fixtures.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { Agent } from './agent.js';

const location = 'mem';
const typesOf = (events: readonly BaseEvent[]) => events.map((event) => event.type);

describe('Agent.fork of a completed agent', () => {
  it('writes lite_agent_execution_completed on the new branch, its parent the checkpoint forked from', async () => {
    const provider = new InMemoryProvider();
    const first = await new Agent({
      role: 'Scout',
      goal: 'Find',
      backstory: 'Curious',
      llm: toolUsingModel(),
      tools: [lookupTool],
      checkpoint: { location, provider, onEvents: ['*'] },
    }).kickoff('Find facts about tides');
    const saved = await provider.list(location);

    const model = toolUsingModel();
    const registry = new ProjectRegistry().register({
      tools: { lookup: lookupTool },
      models: { 'offline:default': model },
    });
    const fork = await Agent.fork({ restoreFrom: location, provider }, { registry, branch: 'experiment' });
    const bus = new EventBus();
    const events = recordEvents(bus);
    const output = await fork.kickoff(undefined, { bus });
    expect(output.raw).toBe(first.raw);
    expect(model.calls).toHaveLength(0);
    expect(typesOf(events)).not.toContain('lite_agent_execution_started');
    expect(typesOf(events).filter((type) => type === 'lite_agent_execution_completed')).toHaveLength(1);
    const added = (await provider.list(location)).slice(saved.length);
    expect(added.map((checkpoint) => [checkpoint.trigger, checkpoint.branch])).toEqual([
      ['lite_agent_execution_completed', 'experiment'],
    ]);
    expect(added[0]!.parentId).toBe(saved.at(-1)!.id);
    expect(fork.lastCheckpoint?.id).toBe(added[0]!.id);
  });
});
