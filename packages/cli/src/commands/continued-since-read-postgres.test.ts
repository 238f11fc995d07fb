// The review's deterministic form of two resumers of one run's latest checkpoint, on Postgres (this
// package's suites get a Postgres server; the runtime's do not): the first reads the latest, a second
// continues the run to its end, then the first kicks off. It used to continue on a new branch and pay
// for the remaining tasks again ([2,3] -> [2,3,2,3]); it is refused with a `conflict` and pays nothing.
import { CrewlineError, EventBus } from '@crewline/events';
import { PostgresProvider } from '@crewline/provider-postgres';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
} from '@crewline/provider-postgres/test-support';
import { Agent, Crew, registerProject, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { afterAll, expect, it } from 'vitest';

describeWithPostgres('a latest checkpoint continued after it was read (postgres)', () => {
  const provider = new PostgresProvider({ poolSize: 2 });
  const location = temporaryLocation();
  const descriptions = ['Research fencing', 'Outline fencing', 'Write fencing', 'Review fencing'];
  let failing = true;
  const model = offlineModel({
    name: 'continued-since-read-postgres',
    failOn: (call) => failing && JSON.stringify(call.messages).includes('Current task: Write fencing'),
  });
  /** The task of each model call, by its number in `descriptions`. */
  const tasksPaid = () =>
    model.calls.map((call) =>
      descriptions.findIndex((description) =>
        JSON.stringify(call.messages).includes(`Current task: ${description}`),
      ),
    );
  const crew = () => {
    const agent = new Agent({ role: 'Researcher', goal: 'g', backstory: 'b', llm: model });
    return new Crew({
      name: 'fencing-crew',
      agents: [agent],
      tasks: descriptions.map((description) => new Task({ description, expectedOutput: 'x', agent })),
      checkpoint: { location, provider, onEvents: ['task_completed'] },
    });
  };

  afterAll(async () => {
    await provider.close();
    await dropLocation(location);
  });

  it('refuses the first resumer with a conflict: no task paid twice', async () => {
    registerProject({ models: { 'offline:continued-since-read-postgres': () => model } });
    await crew()
      .kickoff({ bus: new EventBus() })
      .catch(() => undefined);
    failing = false;
    model.reset();
    const head = (await provider.latest(provider.resolveLocation(location)))!;
    const first = await Crew.fromCheckpoint({ location, provider, restoreFrom: location });
    await crew().kickoff({
      bus: new EventBus(),
      fromCheckpoint: { location, provider, restoreFrom: location },
    });
    expect(tasksPaid()).toEqual([2, 3]);

    const refusal = await first.kickoff({ bus: new EventBus() }).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(CrewlineError.hasCode(refusal, 'conflict')).toBe(true);
    expect((refusal as CrewlineError).details).toMatchObject({
      checkpointId: head.id,
      continuedSinceRead: true,
    });
    expect(tasksPaid()).toEqual([2, 3]);
  });
});
