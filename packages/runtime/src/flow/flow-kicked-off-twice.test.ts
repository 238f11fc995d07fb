// Found by a review: one Flow object kicked off twice in a method of another flow (an inner flow
// reused for two topics) was one entity of the run, holding only its latest kickoff, so a resume
// handed the first kickoff the second one's saved work. Each kickoff is an entity of its own now, as
// for crews and agents; a persisted flow keeps its state id (its identity across runs) for both.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { carriedTaskNumbers } from '../restore/saved-interrupted-tasks.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { Flow, persist, start } from './index.js';

const model = offlineModel({ name: 'flow-kicked-off-twice' });
afterEach(() => model.reset());
const root = mkdtempSync(join(tmpdir(), 'crewline-flow-twice-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

class Inner extends Flow<{ topic: string; text: string }> {
  initialState = { topic: '', text: '' };
  @start() async write() {
    const agent = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Plain', llm: model });
    const crew = new Crew({
      name: 'inner',
      agents: [agent],
      tasks: ['Draft {topic}', 'Polish {topic}'].map(
        (description) => new Task({ description, expectedOutput: 'text', agent }),
      ),
    });
    this.state.text = (await crew.kickoff({ inputs: { topic: this.state.topic }, bus: this.bus })).raw;
    return this.state.text;
  }
}

@persist({ location: join(root, 'states') })
class PersistedInner extends Inner {}

/** An outer flow whose one method kicks off one `inner` object for two topics. */
function outerOf(makeInner: () => Inner) {
  const stateIds: string[] = [];
  class Outer extends Flow<{ texts: string[] }> {
    initialState = { texts: [] as string[] };
    @start() async both() {
      const inner = makeInner();
      for (const topic of ['tides', 'volcanoes']) {
        const result = await inner.kickoff({ inputs: { topic } });
        stateIds.push(result.stateId);
        this.state.texts.push(result.state.text);
      }
      return 'done';
    }
  }
  return { Outer, stateIds };
}

/** Runs `Outer`, then resumes it from the checkpoint written when the inner flow's second kickoff finished. */
async function resumeAfterSecondKickoff(Outer: ReturnType<typeof outerOf>['Outer']) {
  const provider = new InMemoryProvider();
  const bus = new EventBus();
  await new Outer({ bus, checkpoint: { location: 'mem', provider, onEvents: ['flow_finished'] } }).kickoff();
  expect(model.calls).toHaveLength(4);
  // flow_finished of the inner flow (tides), of the inner flow (volcanoes), of the outer flow.
  const [, secondDone] = await provider.list('mem');
  const document = await readDocument(provider, 'mem', secondDone!.id);
  model.reset();
  const restored = await Outer.fromCheckpoint(
    { restoreFrom: `mem#${secondDone!.id}`, provider },
    { bus: new EventBus() },
  );
  const resumed = await restored.kickoff();
  return {
    flowsSaved: document.entities.filter((entity) => entity.kind === 'flow').length,
    // What a continuation plan (the CLI's) says is carried as saved: every task of both kickoffs.
    carriedTasks: [...carriedTaskNumbers(document)],
    callsOnResume: model.calls.length,
    texts: resumed.state.texts.map((text) => text.match(/Polish (\w+)/)?.[1]),
  };
}

describe('one Flow object kicked off twice in one run', () => {
  it('hands each kickoff its own saved work on resume', async () => {
    const { Outer } = outerOf(() => new Inner());
    expect(await resumeAfterSecondKickoff(Outer)).toEqual({
      flowsSaved: 3,
      carriedTasks: [1, 2, 3, 4],
      callsOnResume: 0,
      texts: ['tides', 'volcanoes'],
    });
  });

  it('keeps a persisted flow its state id across both kickoffs, each saved on its own', async () => {
    const { Outer, stateIds } = outerOf(() => new PersistedInner());
    expect(await resumeAfterSecondKickoff(Outer)).toEqual({
      flowsSaved: 3,
      carriedTasks: [1, 2, 3, 4],
      callsOnResume: 0,
      texts: ['tides', 'volcanoes'],
    });
    // Two kickoffs in the first run, two on the resume: one state, as a persisted flow's identity.
    expect(stateIds).toHaveLength(4);
    expect(new Set(stateIds).size).toBe(1);
    // Loaded by its id later, on its own, the persisted state is the one its latest kickoff left.
    model.reset();
    const loader = new PersistedInner({ bus: new EventBus() });
    const later = await loader.kickoff({ inputs: { id: stateIds[0]! } });
    expect({ topic: later.state.topic, calls: model.calls.length }).toEqual({ topic: 'volcanoes', calls: 0 });
    // Its own run's root, saved under its state id again, where the next load looks for it.
    expect(loader.entityId).toBe(stateIds[0]);
  });
});
