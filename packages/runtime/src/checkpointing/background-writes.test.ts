// JSON checkpoints written in the background (capabilities.backgroundWrites): the barrier before each
// model and tool call (state.durable()), the exit listener that writes what is still queued
// (state.writePendingSync(), in a real child process that calls process.exit), and failures of the
// background writer (best-effort) next to strict checkpoints (throw).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type BaseEvent,
  checkpointLifecycleEventTypes,
  EventBus,
  type LogRecord,
  setLogSink,
} from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import type { CheckpointWrite, StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { type ChildScript, exited, prepareChildScript, startChild } from '../e2e/support/child-process.js';
import { allFiles, checkpointFiles, readCheckpoint, temporaryDirectory } from '../e2e/support/fixtures.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { defineTool } from '../tools/define-tool.js';
import { Run } from './run.js';
import { emptyFlowEntity } from './test-support/empty-flow-entity.js';
import { SlowJsonProvider } from './test-support/slow-json-provider.js';

const lifecycle = new Set<string>(checkpointLifecycleEventTypes);

let directory: { path: string; cleanup: () => void };
const logs: LogRecord[] = [];
beforeEach(() => {
  directory = temporaryDirectory('crewline-background-');
  logs.length = 0;
  setLogSink((record) => void logs.push(record));
});
afterEach(() => {
  setLogSink(null);
  directory.cleanup();
});

/** The triggers of the checkpoint files on disk, oldest first; fails on a torn or temp file. */
function triggersOnDisk(location: string): string[] {
  const files = checkpointFiles(location);
  expect(allFiles(location)).toHaveLength(files.length);
  return files.map((file) => readCheckpoint(file).metadata.trigger);
}

describe('the barrier before model and tool calls (state.durable())', () => {
  it('has every checkpoint of an earlier event on disk, whole, when a model request or tool execution starts', async () => {
    const location = join(directory.path, 'cp');
    const provider = new SlowJsonProvider(25);
    const bus = new EventBus();
    const events: string[] = [];
    bus.onAny((_source: unknown, event: BaseEvent) => {
      if (!lifecycle.has(event.type)) events.push(event.type);
    });
    /** What was on disk at each model request / tool execution, next to the events emitted by then. */
    const seen: {
      at: 'model' | 'tool';
      events: string[];
      onDisk: string[];
      otherFiles: number;
      /** Assistant turns the request was built from, and those the newest checkpoint on disk holds. */
      turns: number;
      savedTurns: number;
    }[] = [];
    // Records only (an assertion failing inside the model would surface as a model error).
    const look = (at: 'model' | 'tool', turns: number) => {
      const files = checkpointFiles(location);
      const documents = files.map((file) => readCheckpoint(file));
      const tasks = (documents.at(-1)?.entities[0]?.data.tasks ?? []) as {
        status: string;
        conversation: { messages: { role: string }[] } | null;
      }[];
      const running = tasks.find((task) => task.status !== 'completed' && task.conversation !== null);
      seen.push({
        at,
        events: [...events],
        onDisk: documents.map((document) => document.metadata.trigger),
        otherFiles: allFiles(location).length - files.length,
        turns,
        savedTurns:
          running?.conversation?.messages.filter((message) => message.role === 'assistant').length ?? 0,
      });
    };
    let lastTurns = 0;
    const llm = offlineModel({
      script: (call) =>
        call.tools.length > 0 && !call.messages.some((message) => message.role === 'assistant')
          ? { toolName: 'probe', input: { query: 'tides' } }
          : undefined,
      // Called the moment each request reaches the model, before it answers.
      latencyMs: (call) => {
        lastTurns = call.messages.filter((message) => message.role === 'assistant').length;
        look('model', lastTurns);
        return 0;
      },
    });
    const probe = defineTool({
      name: 'probe',
      description: 'Looks a subject up',
      inputSchema: z.object({ query: z.string() }),
      execute: ({ query }) => {
        look('tool', lastTurns + 1); // the completion that asked for the tool
        return `notes about ${query}`;
      },
    });
    const researcher = new Agent({
      role: 'Researcher',
      goal: 'Research',
      backstory: 'B',
      llm,
      tools: [probe],
    });
    const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'B', llm, tools: [probe] });
    const crew = new Crew({
      tasks: [
        new Task({ description: 'research tides', expectedOutput: 'notes', agent: researcher }),
        new Task({ description: 'write about tides', expectedOutput: 'a text', agent: writer }),
      ],
      checkpoint: { provider, location, onEvents: ['*'] },
    });
    await crew.kickoff({ bus });

    // Two tasks, each: a request that calls the tool, the tool, a request that answers.
    expect(seen.map((entry) => entry.at)).toEqual(['model', 'tool', 'model', 'model', 'tool', 'model']);
    expect(llm.calls).toHaveLength(4);
    for (const entry of seen) {
      // No temp file, no torn file (each was parsed and validated above).
      expect(entry.otherFiles).toBe(0);
      // The newest checkpoint holds every completion the request (or the tool call) came from.
      expect(entry.savedTurns).toBe(entry.turns);
      // Every event emitted so far (the started event of this very call included) is a file on disk.
      expect(entry.onDisk).toEqual(entry.events);
      expect(entry.onDisk.at(-1)).toBe(entry.at === 'model' ? 'llm_call_started' : 'tool_usage_started');
    }
    // The requests after a completion: its llm_call_completed checkpoint was on disk before them.
    expect(seen[2]!.onDisk).toContain('llm_call_completed');
    expect(seen[2]!.onDisk).toContain('tool_usage_finished');
    // The background writer was really behind: checkpoints queued up and went as groups.
    expect(provider.largestBatch).toBeGreaterThan(1);
    expect(triggersOnDisk(location)).toEqual(events);
  });
});

describe('process.exit during a run (the exit listener)', () => {
  let script: ChildScript;
  beforeAll(async () => {
    script = await prepareChildScript(
      fileURLToPath(new URL('./test-support/exit-child.ts', import.meta.url)),
    );
  });
  afterAll(() => script.dispose());

  it('writes the checkpoints still queued, in order and whole, before the process ends', {
    timeout: 60_000,
  }, async () => {
    const location = join(directory.path, 'cp');
    const started = startChild(script, [location, 'task_completed']);
    const end = await exited(started.child);
    expect(started.stderr()).toBe('');
    expect(end).toEqual({ code: 0, signal: null });
    const exiting = started.lines.find((line) => line.startsWith('exiting '));
    expect(exiting).toBeDefined();
    const { events, onDisk } = JSON.parse(exiting!.slice('exiting '.length)) as {
      events: string[];
      onDisk: number;
    };
    // When the handler called process.exit, the checkpoints of the latest events were queued, not on
    // disk (the writer starts a group at the end of the event loop's turn, or at the next barrier).
    expect(onDisk).toBeLessThan(events.length);
    expect(events.at(-1)).toBe('task_completed');
    // Every event's checkpoint is on disk, the newest the one of the event the process exited at.
    expect(triggersOnDisk(location)).toEqual(events);
  });
});

/** The JSON provider whose background writes fail; `writeSync` fails too when `syncFails` is set. */
class BrokenBackgroundProvider extends JsonProvider {
  constructor(private readonly syncFails: boolean) {
    super();
  }
  override async write(): Promise<StoredCheckpoint> {
    throw new Error('disk full (background)');
  }
  override async writeBatch(): Promise<StoredCheckpoint[]> {
    throw new Error('disk full (batch)');
  }
  override writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    if (this.syncFails) throw new Error('disk full (sync)');
    return super.writeSync(location, checkpoint);
  }
}

describe('failures of the background writer', () => {
  it('are logged with the reason and the run finishes', async () => {
    const location = join(directory.path, 'cp');
    const provider = new BrokenBackgroundProvider(false);
    const bus = new EventBus();
    const failed: BaseEvent[] = [];
    bus.onAny((_source: unknown, event: BaseEvent) => {
      if (event.type === 'checkpoint_failed') failed.push(event);
    });
    const llm = offlineModel();
    const agent = new Agent({ role: 'A', goal: 'G', backstory: 'B', llm });
    const crew = new Crew({
      tasks: [new Task({ description: 'x', expectedOutput: 'y', agent })],
      checkpoint: { provider, location, onEvents: ['*'] },
    });
    const result = await crew.kickoff({ bus });
    expect(result.raw).toContain('[offline model]');
    expect(llm.calls).toHaveLength(1);
    const warnings = logs.filter((record) => record.message.includes('automatic checkpoint on'));
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.map((record) => record.level)).toEqual(warnings.map(() => 'warn'));
    expect(warnings.some((record) => record.message.includes('llm_call_completed'))).toBe(true);
    expect(String((warnings[0]!.error as Error).message)).toContain('disk full (background)');
    expect(failed.length).toBe(warnings.length);
    // Nothing was written: not through writeSync either (automatic writes go to the background).
    expect(checkpointFiles(location)).toEqual([]);
  });

  it('leave strict checkpoints strict: checkpoint() and acheckpoint() throw on the same provider', async () => {
    const location = join(directory.path, 'cp');
    const provider = new BrokenBackgroundProvider(true);
    const { parseCheckpointConfig } = await import('@crewline/runtime-state');
    await Run.execute(
      {
        root: emptyFlowEntity,
        config: { ...parseCheckpointConfig({ onEvents: ['task_completed'], location }), provider },
        inputs: {},
        bus: new EventBus(),
      },
      async (run) => {
        expect(() => run.state.checkpoint()).toThrow('disk full (sync)');
        await expect(run.state.acheckpoint()).rejects.toThrow('disk full (background)');
        await run.state.durable();
      },
    );
    expect(checkpointFiles(location)).toEqual([]);
  });
});
