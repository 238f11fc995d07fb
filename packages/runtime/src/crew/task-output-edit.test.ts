import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import {
  checkpointFiles,
  lookupTool,
  readCheckpoint,
  temporaryDirectory,
  threeTaskCrew,
  toolUsingModel,
} from '../e2e/support/fixtures.js';
import { type OfflineModel, offlineModel } from '../models/offline/offline-model.js';
import { registerProject } from '../project-config/project-config.js';
import { Task } from '../task/task.js';
import { findCalls } from '../testing/call-helpers.js';
import { Crew } from './crew.js';
import { editTaskOutputsInDocument } from './task-output-edit.js';

let directory: { path: string; cleanup: () => void };
beforeEach(() => {
  directory = temporaryDirectory();
  registerProject({ tools: { lookup: lookupTool } });
});
afterEach(() => directory.cleanup());

function callsPerTask(model: OfflineModel): Record<string, number> {
  const counts: Record<string, number> = { Research: 0, Write: 0, Review: 0 };
  for (const name of Object.keys(counts)) {
    counts[name] = findCalls(model, (call) =>
      JSON.stringify(call.messages[0]).includes(`Current task: ${name}`),
    ).length;
  }
  return counts;
}

describe('editing a completed task output', () => {
  it('fork with an edited output re-runs exactly the downstream tasks against the edit', async () => {
    const location = `${directory.path}/cp`;
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const complete = checkpointFiles(location).at(-1)!;

    const model = toolUsingModel();
    registerProject({ models: { 'offline:default': model } });
    const forked = await Crew.fork({ restoreFrom: complete }, { branch: 'edited' });
    forked.setTaskOutput(1, 'EDITED SUMMARY: robots everywhere');
    const result = await forked.kickoff();

    // Research and write are done (write was edited); review runs again, with one tool call.
    expect(callsPerTask(model)).toEqual({ Research: 0, Write: 0, Review: 2 });
    expect(model.calls[0]!.userText).toContain('EDITED SUMMARY: robots everywhere');
    expect(result.tasksOutput[1]!.raw).toBe('EDITED SUMMARY: robots everywhere');
    expect(result.tasksOutput[1]!.edited).toBe(true);
    const forkFiles = checkpointFiles(location).filter((file) => file.includes('/edited/'));
    expect(forkFiles).toHaveLength(1);
    expect(readCheckpoint(forkFiles[0]!).metadata.parentId).toBe(readCheckpoint(complete).metadata.id);
  });

  it('editing the first task invalidates the two after it', async () => {
    const location = `${directory.path}/cp`;
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const model = toolUsingModel();
    const { crew: again } = threeTaskCrew(model);
    await again.kickoff({ fromCheckpoint: { restoreFrom: location } }); // restores, nothing to do
    expect(model.calls).toHaveLength(0);
    again.setTaskOutput(again.tasks[0]!, 'NEW RESEARCH');
    expect(again.tasks.map((task) => task.status)).toEqual(['completed', 'pending', 'pending']);
    const result = await again.kickoff();
    expect(callsPerTask(model)).toEqual({ Research: 0, Write: 2, Review: 2 });
    expect(result.tasksOutput[0]!.raw).toBe('NEW RESEARCH');
    expect(model.calls[0]!.userText).toContain('NEW RESEARCH');
    // A kickoff after that starts over again.
    await again.kickoff({ inputs: { topic: 'AI' } });
    expect(callsPerTask(model)).toEqual({ Research: 2, Write: 4, Review: 4 });
  });

  it('a structured task only accepts an edit its schema accepts', async () => {
    const llm = offlineModel();
    const analyst = new Agent({ role: 'Analyst', goal: 'Score', backstory: 'Numbers', llm });
    const crew = new Crew({
      tasks: [
        new Task({
          description: 'Score it',
          expectedOutput: 'a score',
          agent: analyst,
          outputSchema: z.object({ score: z.number() }),
        }),
        new Task({ description: 'Explain the score', expectedOutput: 'text', agent: analyst }),
      ],
    });
    const first = await crew.kickoff();
    expect(first.tasksOutput[0]!.structured).toMatchObject({ score: expect.any(Number) });
    expect(() => crew.setTaskOutput(0, 'not json')).toThrow(/outputSchema/);
    crew.setTaskOutput(0, '{"score": 7}');
    expect(crew.tasks[0]!.output!.structured).toEqual({ score: 7 });
  });

  it('edits a checkpoint document by flat index and invalidates every later task', async () => {
    const location = `${directory.path}/cp`;
    const { crew } = threeTaskCrew(toolUsingModel(), {
      checkpoint: { location, onEvents: ['crew_kickoff_completed'] },
    });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const document = readCheckpoint(checkpointFiles(location)[0]!);
    const edited = editTaskOutputsInDocument(document, { 0: 'EDITED' });
    const tasks = edited.entities[0]!.data.tasks as {
      status: string;
      output: { raw: string; edited: boolean } | null;
    }[];
    expect(tasks.map((task) => task.status)).toEqual(['completed', 'pending', 'pending']);
    expect(tasks[0]!.output).toMatchObject({ raw: 'EDITED', edited: true });
    expect(edited.entities[0]!.data.status).toBe('running');
    expect((document.entities[0]!.data.tasks as { status: string }[])[1]!.status).toBe('completed'); // input untouched
    expect(() => editTaskOutputsInDocument(document, { 3: 'x' })).toThrow(/out of range/);
  });

  it("a document edit puts the edited text into the memory of the crew and the task's agent, as setTaskOutput does", async () => {
    const location = `${directory.path}/cp`;
    const llm = offlineModel();
    const researcher = new Agent({ role: 'Researcher', goal: 'Research', backstory: 'b', llm, memory: true });
    const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'b', llm, memory: true });
    const crew = new Crew({
      name: 'memory-crew',
      agents: [researcher, writer],
      tasks: [
        new Task({
          name: 'research',
          description: 'Research it',
          expectedOutput: 'notes',
          agent: researcher,
        }),
        new Task({ name: 'write', description: 'Write it', expectedOutput: 'text', agent: writer }),
      ],
      memory: true,
      checkpoint: { location, onEvents: ['crew_kickoff_completed'] },
    });
    await crew.kickoff();
    const document = readCheckpoint(checkpointFiles(location)[0]!);
    const edited = editTaskOutputsInDocument(document, { 0: 'EDITED RESEARCH' });
    crew.setTaskOutput(0, 'EDITED RESEARCH');

    type StoredMemory = { items: { text: string; metadata: Record<string, unknown> }[] } | null;
    const data = edited.entities[0]!.data as {
      memoryState: StoredMemory;
      agents: { role: string; memory: StoredMemory }[];
    };
    const texts = (memory: StoredMemory) => memory!.items.map((item) => item.text);
    const metadata = (memory: StoredMemory) => memory!.items.map((item) => item.metadata);
    // The researcher did the edited task: its memory holds the new text and not the old; the writer's
    // item (a later task, invalidated) is gone from both.
    expect(texts(data.agents[0]!.memory)).toEqual(['EDITED RESEARCH']);
    expect(texts(data.agents[1]!.memory)).toEqual([]);
    expect(texts(data.memoryState)).toEqual(['EDITED RESEARCH']);
    // The same items, with the same metadata, as the edit of the live crew.
    expect(metadata(data.agents[0]!.memory)).toEqual(researcher.memory!.items().map((item) => item.metadata));
    expect(texts(data.agents[0]!.memory)).toEqual(researcher.memory!.items().map((item) => item.text));
    expect(texts(data.memoryState)).toEqual(crew.memory!.items().map((item) => item.text));
  });
});
