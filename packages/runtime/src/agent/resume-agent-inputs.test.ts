// A standalone agent kicked off with inputs (its role, goal and backstory are templates) and stopped
// mid-work: a resume continues with the inputs it ran with, as a crew's does. Found in a review of
// the redacted-inputs change: the restored agent's system prompt went to the model with the literal
// `{topic}` of its goal.
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { lookupTool, toolUsingModel } from '../e2e/support/fixtures.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { Agent } from './agent.js';

const location = 'mem';

function scout(provider: InMemoryProvider, model = toolUsingModel()): Agent {
  return new Agent({
    role: 'Scout',
    goal: 'Find facts about {topic}',
    backstory: 'Curious about {topic}',
    llm: model,
    tools: [lookupTool],
    checkpoint: { location, provider, onEvents: ['*'] },
  });
}

/** Stopped after its tool call: its second model call failed. */
async function stoppedMidWork(provider: InMemoryProvider): Promise<void> {
  await scout(provider, toolUsingModel({ failOn: [2] }))
    .kickoff('Find facts', { inputs: { topic: 'tides' } })
    .catch(() => undefined);
}

describe('a standalone agent resumed mid-work', () => {
  it('with Agent.fromCheckpoint sends the prompt filled with the inputs it ran with', async () => {
    const provider = new InMemoryProvider();
    await stoppedMidWork(provider);
    const model = toolUsingModel();
    const registry = new ProjectRegistry().register({
      tools: { lookup: lookupTool },
      models: { 'offline:default': model },
    });
    const agent = await Agent.fromCheckpoint({ restoreFrom: location, provider }, { registry });
    await agent.kickoff(undefined);
    const sent = JSON.stringify(model.calls);
    expect(sent).toContain('Find facts about tides');
    expect(sent).not.toContain('{topic}');
  });

  it('with kickoff({ fromCheckpoint }) too', async () => {
    const provider = new InMemoryProvider();
    await stoppedMidWork(provider);
    const model = toolUsingModel();
    await scout(provider, model).kickoff(undefined, { fromCheckpoint: { restoreFrom: location, provider } });
    expect(JSON.stringify(model.calls)).toContain('Find facts about tides');
    expect(JSON.stringify(model.calls)).not.toContain('{topic}');
  });

  it('with new inputs given to the resuming kickoff: they win over the saved ones', async () => {
    const provider = new InMemoryProvider();
    await stoppedMidWork(provider);
    const model = toolUsingModel();
    await scout(provider, model).kickoff(undefined, {
      fromCheckpoint: { restoreFrom: location, provider },
      inputs: { topic: 'kelp' },
    });
    expect(JSON.stringify(model.calls)).toContain('Find facts about kelp');
    expect(JSON.stringify(model.calls)).not.toContain('Find facts about tides');
  });
});
