// Found by a trial: a crew whose model needs an API key that is not set wrote its first checkpoints
// (and a resume wrote more) before failing at the first model call; in a flow, earlier crews were
// paid for first. The models of the agents with work left are resolved before the run starts.
import { CrewlineError } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Task } from '../task/task.js';
import { Crew } from './crew.js';

let savedKey: string | undefined;
beforeEach(() => {
  savedKey = process.env.OPENAI_API_KEY;
  delete process.env.OPENAI_API_KEY;
});
afterEach(() => {
  if (savedKey !== undefined) process.env.OPENAI_API_KEY = savedKey;
});

describe('a model that cannot be built', () => {
  it('fails the crew kickoff before its first checkpoint', async () => {
    const provider = new InMemoryProvider();
    const agent = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Clear', llm: 'openai:gpt-4o-mini' });
    const crew = new Crew({
      agents: [agent],
      tasks: [new Task({ description: 'Write', expectedOutput: 'text', agent })],
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    });
    const failure = await crew.kickoff().catch((error: unknown) => error);
    expect(CrewlineError.isInstance(failure)).toBe(true);
    expect((failure as Error).message).toContain('OPENAI_API_KEY');
    expect(await provider.list('mem')).toEqual([]);
  });

  it('fails a standalone agent kickoff before its first checkpoint', async () => {
    const provider = new InMemoryProvider();
    const agent = new Agent({
      role: 'Writer',
      goal: 'Write',
      backstory: 'Clear',
      llm: 'openai:gpt-4o-mini',
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    });
    await expect(agent.kickoff('Write')).rejects.toThrow('OPENAI_API_KEY');
    expect(await provider.list('mem')).toEqual([]);
  });
});
