// The Crew and Agent examples of the checkpointing documentation, in TypeScript, run with the
// offline model. Each test follows one how-to and checks what the documentation says happens.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventBus, LLMCallCompletedEvent } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { registerProject } from '../project-config/project-config.js';
import { Task } from '../task/task.js';
import { countCalls } from '../testing/call-helpers.js';
import {
  checkpointFiles,
  lookupTool,
  offlineModel,
  readCheckpoint,
  temporaryDirectory,
  threeTaskCrew,
} from './support/fixtures.js';
import { importIfInstalled } from './support/optional-package.js';

let directory: { path: string; cleanup: () => void };
let previousDirectory: string;

beforeEach(() => {
  directory = temporaryDirectory();
  previousDirectory = process.cwd();
  // The documented defaults are relative paths (./.checkpoints): run each example in its own folder.
  process.chdir(directory.path);
});

afterEach(() => {
  process.chdir(previousDirectory);
  directory.cleanup();
});

async function loadSqliteProvider(): Promise<(new () => CheckpointProvider) | undefined> {
  const module = await importIfInstalled<{ SqliteProvider?: new () => CheckpointProvider }>(
    '@crewline/provider-sqlite',
  );
  return module?.SqliteProvider;
}

// Skipped (not failed) only where @crewline/provider-sqlite is not installed, an optional peer; an
// install that is there but cannot load fails the file.
const SqliteProvider = await loadSqliteProvider();

function twoTaskCrew(
  llm: ReturnType<typeof offlineModel>,
  checkpoint: Crew['checkpoint'],
  writerCheckpoint?: false,
) {
  const researcher = new Agent({ role: 'Researcher', goal: 'Research', backstory: 'Expert', llm });
  const writer = new Agent({
    role: 'Writer',
    goal: 'Write',
    backstory: 'Expert',
    llm,
    ...(writerCheckpoint === false ? { checkpoint: false } : {}),
  });
  return new Crew({
    agents: [researcher, writer],
    tasks: [
      new Task({ description: 'Research AI trends', agent: researcher, expectedOutput: 'bullets' }),
      new Task({ description: 'Write a summary', agent: writer, expectedOutput: 'paragraph' }),
    ],
    checkpoint,
  });
}

describe('tutorial: resume a failing crew', () => {
  it('skips the finished research task and runs the writer against the saved research', async () => {
    const failing = offlineModel({ failOn: (call) => call.userText.includes('Write a summary') });
    const crew = twoTaskCrew(failing, true);
    await expect(crew.kickoff()).rejects.toThrow(/offline model/);
    const [file] = checkpointFiles('.checkpoints');
    expect(file).toBeDefined();
    expect(checkpointFiles('.checkpoints')).toHaveLength(1);

    const llm = offlineModel();
    const again = twoTaskCrew(llm, true);
    const result = await again.kickoff({ fromCheckpoint: { restoreFrom: file! } });

    expect(countCalls(llm, /Current task: Research AI trends/)).toBe(0);
    expect(countCalls(llm, /Current task: Write a summary/)).toBe(1);
    const researchOutput = readCheckpoint(file!).entities[0]!.data.tasks as { output: { raw: string } }[];
    expect(llm.calls[0]!.userText).toContain(researchOutput[0]!.output.raw.slice(0, 80));
    expect(result.tasksOutput).toHaveLength(2);
    expect(result.tasksOutput[0]!.raw).toBe(researchOutput[0]!.output.raw);
  });
});

describe('how-to guides', () => {
  it('enable checkpointing with defaults: ./.checkpoints on every task_completed', async () => {
    const crew = twoTaskCrew(offlineModel(), true);
    await crew.kickoff();
    const files = checkpointFiles('.checkpoints');
    expect(files).toHaveLength(2);
    expect(files.every((file) => file.startsWith(join('.checkpoints', 'main')))).toBe(true);
    expect(files.map((file) => readCheckpoint(file).metadata.trigger)).toEqual([
      'task_completed',
      'task_completed',
    ]);
  });

  it('customize storage and frequency: location, two triggers, maxCheckpoints', async () => {
    const { crew } = threeTaskCrew(offlineModel(), {
      checkpoint: {
        location: './my_checkpoints',
        onEvents: ['task_completed', 'crew_kickoff_completed'],
        maxCheckpoints: 2,
      },
    });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const files = checkpointFiles('my_checkpoints');
    // Four writes (three tasks and the kickoff); the oldest two were pruned.
    expect(files).toHaveLength(2);
    expect(files.map((file) => readCheckpoint(file).metadata.trigger)).toEqual([
      'task_completed',
      'crew_kickoff_completed',
    ]);
  });

  it('choose a storage provider: JsonProvider', async () => {
    const crew = twoTaskCrew(offlineModel(), {
      location: './my_checkpoints',
      provider: new JsonProvider(),
      maxCheckpoints: 5,
    });
    await crew.kickoff();
    expect(checkpointFiles('my_checkpoints')).toHaveLength(2);
  });

  it.skipIf(!SqliteProvider)(
    'choose a storage provider: SqliteProvider (one database file, restorable by db#id)',
    async () => {
      const provider = new SqliteProvider!();
      const crew = twoTaskCrew(offlineModel(), {
        location: './.checkpoints.db',
        provider,
        maxCheckpoints: 50,
      });
      const first = await crew.kickoff();
      const stored = await provider.list(provider.resolveLocation('./.checkpoints.db'));
      expect(stored.map((entry) => entry.trigger)).toEqual(['task_completed', 'task_completed']);
      expect(stored[0]!.reference).toMatch(/\.checkpoints\.db#/);

      const llm = offlineModel();
      const restored = twoTaskCrew(llm, undefined);
      const result = await restored.kickoff({ fromCheckpoint: { restoreFrom: stored[1]!.reference } });
      expect(llm.calls).toHaveLength(0); // both tasks were complete in that checkpoint
      expect(result.raw).toBe(first.raw);
      await provider.close?.();
    },
  );

  it('opt one agent out: the writer’s task writes no checkpoint', async () => {
    const crew = twoTaskCrew(offlineModel(), true, false);
    await crew.kickoff();
    const files = checkpointFiles('.checkpoints');
    expect(files).toHaveLength(1);
    const tasks = readCheckpoint(files[0]!).entities[0]!.data.tasks as { status: string }[];
    expect(tasks.map((task) => task.status)).toEqual(['completed', 'pending']);
  });

  it('fork into a new branch: new lineage, parent recorded, original branch untouched', async () => {
    const { crew } = threeTaskCrew(offlineModel(), { checkpoint: { location: './my_checkpoints' } });
    await crew.kickoff({ inputs: { topic: 'AI', strategy: 'careful' } });
    const original = checkpointFiles('my_checkpoints');
    const originalBytes = original.map((file) => readFileSync(file, 'utf8'));
    const restoreFrom = original[0]!; // after the research task

    // The crew is rebuilt from the checkpoint; its custom tool is found by name (crewline.config.ts does this).
    registerProject({ tools: { lookup: lookupTool } });
    const forked = await Crew.fork({ restoreFrom }, { branch: 'experiment-a' });
    expect(forked.checkpointBranch).toBe('experiment-a');
    await forked.kickoff({ inputs: { strategy: 'aggressive' } });

    const all = checkpointFiles('my_checkpoints');
    const fork = all.filter((file) => file.includes(join('my_checkpoints', 'experiment-a')));
    expect(fork).toHaveLength(2); // write and review ran again on the fork
    const first = readCheckpoint(fork[0]!);
    const source = readCheckpoint(restoreFrom);
    expect(first.metadata.parentId).toBe(source.metadata.id);
    expect(first.metadata.branch).toBe('experiment-a');
    expect(first.metadata.lineageId).not.toBe(source.metadata.lineageId);
    expect(original.map((file) => readFileSync(file, 'utf8'))).toEqual(originalBytes);
    expect(all.filter((file) => file.includes(join('my_checkpoints', 'main')))).toHaveLength(original.length);

    const generated = await Crew.fork({ restoreFrom });
    expect(generated.checkpointBranch).toMatch(/^fork\//);
  });

  it('checkpoint a Crew: own location, default trigger task_completed', async () => {
    const { crew } = threeTaskCrew(offlineModel(), { checkpoint: { location: './crew_cp' } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const files = checkpointFiles('crew_cp');
    expect(files.map((file) => readCheckpoint(file).metadata.trigger)).toEqual([
      'task_completed',
      'task_completed',
      'task_completed',
    ]);
    const last = readCheckpoint(files[2]!);
    expect(last.metadata.entities[0]).toMatchObject({ kind: 'crew', completed: 3, total: 3 });
  });

  it('checkpoint an Agent: standalone kickoff on lite_agent_execution_completed', async () => {
    const agent = new Agent({
      role: 'Researcher',
      goal: 'Research topics',
      backstory: 'Expert researcher',
      llm: offlineModel(),
      checkpoint: { location: './agent_cp', onEvents: ['lite_agent_execution_completed'] },
    });
    const result = await agent.kickoff([{ role: 'user', content: 'Research AI trends' }]);
    expect(result.raw).toContain('Research AI trends');
    const files = checkpointFiles('agent_cp');
    expect(files).toHaveLength(1);
    const document = readCheckpoint(files[0]!);
    expect(document.metadata.trigger).toBe('lite_agent_execution_completed');
    expect(document.entities[0]).toMatchObject({ kind: 'agent', name: 'Researcher' });
    expect(document.events.map((event) => event.type)).toContain('lite_agent_execution_started');
  });

  it('write a checkpoint manually from a synchronous handler (state.checkpoint)', async () => {
    const saved: string[] = [];
    const unsubscribe = eventBus.on(LLMCallCompletedEvent, (_source, _event, state) => {
      saved.push(state.checkpoint('./my_checkpoints'));
    });
    try {
      const llm = offlineModel();
      await twoTaskCrew(llm, undefined).kickoff();
      expect(saved).toHaveLength(llm.calls.length);
      const files = checkpointFiles('my_checkpoints');
      expect(files).toHaveLength(2);
      expect(files.map((file) => readCheckpoint(file).metadata.trigger)).toEqual(['manual', 'manual']);
      expect(readCheckpoint(files[1]!).metadata.parentId).toBe(readCheckpoint(files[0]!).metadata.id);
    } finally {
      unsubscribe();
    }
  });

  it('write a checkpoint manually from an async handler (state.acheckpoint)', async () => {
    const saved: string[] = [];
    const unsubscribe = eventBus.on(LLMCallCompletedEvent, async (_source, _event, state) => {
      saved.push(await state.acheckpoint('./my_checkpoints'));
    });
    try {
      const llm = offlineModel();
      await twoTaskCrew(llm, undefined).kickoff();
      expect(saved).toHaveLength(2);
      expect(checkpointFiles('my_checkpoints')).toHaveLength(2);
    } finally {
      unsubscribe();
    }
  });

  it('llm_call_completed as a trigger writes one checkpoint per call, holding that call’s answer', async () => {
    const llm = offlineModel();
    const crew = twoTaskCrew(llm, { location: './llm_cp', onEvents: ['llm_call_completed'] });
    await crew.kickoff();
    const files = checkpointFiles('llm_cp');
    expect(files).toHaveLength(llm.calls.length);
    const first = readCheckpoint(files[0]!);
    expect(first.metadata.trigger).toBe('llm_call_completed');
    const [task] = first.entities[0]!.data.tasks as {
      status: string;
      conversation: { messages: { role: string }[] };
    }[];
    // The answer is in the checkpoint: a resume from here never asks the model for it again.
    expect(task!.status).toBe('running');
    expect(task!.conversation.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
  });
});
