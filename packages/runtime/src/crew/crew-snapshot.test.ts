import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BaseEvent, eventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { decodeValue, type RuntimeState, readDocument, SettledValues } from '@crewline/runtime-state';
import type { CrewData } from '@crewline/runtime-state/internal';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { Crew } from './crew.js';

function crewDataOf(snapshot: { data: unknown }): CrewData {
  return snapshot.data as CrewData;
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function twoTaskCrew(agent: Agent, checkpoint?: ConstructorParameters<typeof Crew>[0]['checkpoint']): Crew {
  return new Crew({
    agents: [agent],
    tasks: [
      new Task({ description: 'first about {topic}', expectedOutput: 'notes', agent }),
      new Task({ description: 'second about {topic}', expectedOutput: 'notes', agent }),
    ],
    ...(checkpoint === undefined ? {} : { checkpoint }),
  });
}

function storedInputs(data: unknown): unknown {
  return decodeValue((data as CrewData).inputs);
}

describe("a crew's kickoff inputs in its snapshot", () => {
  it('are stored anew once changed in place, and kept while unchanged', () => {
    const crew = twoTaskCrew(new Agent({ role: 'R', goal: 'G', backstory: 'B' }));
    crew.inputs = { topic: 'A', tags: ['x'] };
    const run = new SettledValues();
    const first = crewDataOf(crew.snapshotEntity(run)).inputs;
    expect(crewDataOf(crew.snapshotEntity(run)).inputs).toBe(first);
    crew.inputs.topic = 'B';
    expect(storedInputs(crew.snapshotEntity(run).data)).toEqual({ topic: 'B', tags: ['x'] });
    (crew.inputs.tags as string[]).push('y');
    expect(storedInputs(crew.snapshotEntity().data)).toEqual({ topic: 'B', tags: ['x', 'y'] });
  });

  it("changed by a handler through state.inputs, resume with the run's new inputs", async () => {
    const root = mkdtempSync(join(tmpdir(), 'crew-inputs-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const provider = new JsonProvider();
    const agent = new Agent({
      role: 'R',
      goal: 'G',
      backstory: 'B',
      llm: offlineModel({ name: 'crew-inputs' }),
    });
    let changed = false;
    const started: string[] = [];
    cleanups.push(
      eventBus.onAny((_source: unknown, event: BaseEvent, state?: unknown) => {
        if (event.type === 'task_started')
          started.push(String((event as { description?: unknown }).description));
        if (event.type === 'task_completed' && !changed && state !== undefined) {
          changed = true;
          (state as RuntimeState).inputs.topic = 'B';
        }
      }),
    );
    await twoTaskCrew(agent, { location: root, provider, onEvents: ['*'] }).kickoff({
      inputs: { topic: 'A' },
    });
    expect(started).toEqual(['first about A', 'second about B']);
    // The last checkpoint whose document holds the new inputs while task 2 is still pending.
    let resumeFrom: string | undefined;
    for (const entry of await provider.list(root)) {
      const document = await readDocument(provider, root, entry.id);
      const data = crewDataOf(document.entities[0]!);
      if (
        decodeValue<{ topic: string }>(document.inputs).topic === 'B' &&
        data.tasks[1]!.status === 'pending'
      ) {
        resumeFrom = entry.reference;
        expect(decodeValue(data.inputs)).toEqual({ topic: 'B' });
      }
    }
    expect(resumeFrom).toBeDefined();
    started.length = 0;
    await twoTaskCrew(agent).kickoff({ fromCheckpoint: { restoreFrom: resumeFrom! } });
    expect(started).toEqual(['second about B']);
  });
});
