import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { Crew } from './crew.js';

function crewOfTwo(model: ReturnType<typeof offlineModel>): Crew {
  const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Clear', llm: model });
  return new Crew({
    name: 'pair',
    agents: [writer],
    tasks: [
      new Task({ description: 'Outline', expectedOutput: 'lines', agent: writer }),
      new Task({ description: 'Write', expectedOutput: 'text', agent: writer }),
    ],
    checkpoint: false,
  });
}

describe('one Crew or Agent object kicked off twice at the same time', () => {
  it('refuses the second kickoff of a crew, and the first runs undisturbed', async () => {
    const model = offlineModel({ latencyMs: 5 });
    const crew = crewOfTwo(model);
    const [first, second] = await Promise.allSettled([crew.kickoff(), crew.kickoff()]);
    expect(first.status).toBe('fulfilled');
    expect(second.status).toBe('rejected');
    const refusal = (second as PromiseRejectedResult).reason as CrewlineError;
    expect(refusal).toBeInstanceOf(CrewlineError);
    expect(refusal.code).toBe('invalid_state');
    expect(refusal.message).toContain('Crew "pair" is already running');
    expect(refusal.message).toContain('make a new Crew for each kickoff');
    // Two tasks, one call each: the refused kickoff reset nothing and paid nothing.
    expect(model.calls).toHaveLength(2);
    expect(crew.tasks.map((task) => task.status)).toEqual(['completed', 'completed']);
    // Once the first returned, the object can run again.
    await crew.kickoff();
    expect(model.calls).toHaveLength(4);
  });

  it('refuses the second kickoff of an agent', async () => {
    const model = offlineModel({ latencyMs: 5 });
    const agent = new Agent({ role: 'Translator', goal: 'Translate', backstory: 'Exact', llm: model });
    const [first, second] = await Promise.allSettled([agent.kickoff('alpha'), agent.kickoff('beta')]);
    expect(first.status).toBe('fulfilled');
    expect(((second as PromiseRejectedResult).reason as Error).message).toContain(
      'Agent "Translator" is already running',
    );
    expect(model.calls).toHaveLength(1);
    expect(JSON.stringify(model.calls[0])).toContain('alpha');
  });
});
