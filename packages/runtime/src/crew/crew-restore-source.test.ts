import { CrewlineError, EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { executions, model, TwoCrewFlow } from '../flow/test-support/crew-scenarios.js';
import { Task } from '../task/task.js';
import { Crew } from './crew.js';

afterEach(() => {
  executions.length = 0;
  model.reset();
});

describe('Crew.fromCheckpoint and Crew.fork of a flow checkpoint', () => {
  for (const call of ['fromCheckpoint', 'fork'] as const) {
    it(`${call} refuses it, naming the flow, its crews and how to continue them`, async () => {
      const provider = new InMemoryProvider();
      await new TwoCrewFlow({ bus: new EventBus(), checkpoint: { location: 'mem', provider } }).kickoff();
      const last = (await provider.list('mem')).at(-1);
      const config = { restoreFrom: `mem#${last?.id}`, provider };

      const refusal = await Crew[call](config, { bus: new EventBus() }).then(
        () => undefined,
        (error: unknown) => error,
      );

      expect(CrewlineError.hasCode(refusal, 'not_found')).toBe(true);
      const message = (refusal as Error).message;
      expect(message).toContain(`Crew.${call}: checkpoint ${last?.id} is flow "TwoCrewFlow"'s`);
      expect(message).toContain('it holds crew "crew", "crew"');
      expect(message).toContain(`MyFlow.${call}({ restoreFrom })`);
      expect(message).toContain(`crewline checkpoint ${call === 'fork' ? 'fork' : 'resume'} ${last?.id}`);
    });
  }

  it('crew.kickoff({ fromCheckpoint }) refuses it too, before any model call', async () => {
    const provider = new InMemoryProvider();
    await new TwoCrewFlow({ bus: new EventBus(), checkpoint: { location: 'mem', provider } }).kickoff();
    const last = (await provider.list('mem')).at(-1);
    model.reset();
    // Shaped like the flow's first crew, which a crew kicked off from the flow's checkpoint took up.
    const researcher = new Agent({ role: 'Researcher', goal: 'Research', backstory: 'Careful', llm: model });
    const crew = new Crew({
      agents: [researcher],
      tasks: [
        new Task({ description: 'Collect facts', expectedOutput: 'bullets', agent: researcher }),
        new Task({ description: 'Rank the facts', expectedOutput: 'ranked list', agent: researcher }),
      ],
      checkpoint: false,
    });

    const refusal = await crew.kickoff({ fromCheckpoint: { restoreFrom: `mem#${last?.id}`, provider } }).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(CrewlineError.hasCode(refusal, 'not_found')).toBe(true);
    expect((refusal as Error).message).toContain(
      `Crew.kickoff({ fromCheckpoint }): checkpoint ${last?.id} is flow "TwoCrewFlow"'s`,
    );
    expect((refusal as Error).message).toContain('MyFlow.fromCheckpoint({ restoreFrom })');
    expect(model.calls).toHaveLength(0);
  });
});
