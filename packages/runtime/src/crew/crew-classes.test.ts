import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { registerProject } from '../project-config/project-config.js';
import { Task } from '../task/task.js';
import { captureLogs, offlineModel } from '../testing/index.js';
import { Crew } from './crew.js';

class Budget {
  constructor(readonly cents: number) {}
  euros(): number {
    return this.cents / 100;
  }
}

describe('classes in a crew checkpoint', () => {
  it('restores kickoff inputs that are instances of registered classes as instances', async () => {
    registerProject({ classes: [Budget] });
    // A registered class is stored as itself: no "stored as a plain object" warning, anywhere.
    const logs = captureLogs();
    const provider = new InMemoryProvider();
    const agent = new Agent({ role: 'Planner', goal: 'Plan', backstory: 'Careful', llm: offlineModel() });
    const crew = new Crew({
      name: 'budget-crew',
      agents: [agent],
      tasks: [new Task({ description: 'Plan {topic}', expectedOutput: 'a plan', agent })],
      checkpoint: { location: 'mem', provider },
    });
    await crew.kickoff({ inputs: { topic: 'a trip', budget: new Budget(1250) } });
    const [checkpoint] = await provider.list('mem');
    const restored = await Crew.fromCheckpoint({ restoreFrom: `mem#${checkpoint?.id}`, provider });
    const budget = restored.inputs.budget as Budget;
    expect(budget).toBeInstanceOf(Budget);
    expect(budget.euros()).toBe(12.5);
    logs.stop();
  });
});
