// SQLite commits a run's automatic checkpoints in groups (SqliteProvider's groupCommit, on by
// default): the barrier before each model and tool call (state.durable()) must still find every
// checkpoint of an earlier event committed, as another connection sees the database.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { type BaseEvent, checkpointLifecycleEventTypes, EventBus } from '@crewline/events';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { type ChildScript, exited, startChild } from '../e2e/support/child-process.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { defineTool } from '../tools/define-tool.js';
import { blockedCrew } from './test-support/blocked-crew.js';

const lifecycle = new Set<string>(checkpointLifecycleEventTypes);

let directory: { path: string; cleanup: () => void };
const providers: SqliteProvider[] = [];
beforeEach(() => {
  directory = temporaryDirectory('crewline-group-commit-');
});
afterEach(() => {
  for (const provider of providers.splice(0)) provider.close();
  directory.cleanup();
});

describe('SQLite group commit and the barrier before model and tool calls', () => {
  it('has every checkpoint of an earlier event committed when a model request or tool execution starts', async () => {
    const location = join(directory.path, 'runs.db');
    const provider = new SqliteProvider();
    // Another connection, as a second process (the CLI, a resumer) would see the database.
    const reader = new SqliteProvider();
    providers.push(provider, reader);
    const groups: number[] = [];
    const writeBatch = provider.writeBatch.bind(provider);
    provider.writeBatch = (target, checkpoints) => {
      groups.push(checkpoints.length);
      return writeBatch(target, checkpoints);
    };
    const bus = new EventBus();
    const events: string[] = [];
    bus.onAny((_source: unknown, event: BaseEvent) => {
      if (!lifecycle.has(event.type)) events.push(event.type);
    });
    const seen: { at: 'model' | 'tool'; events: string[]; committed: string[] }[] = [];
    const look = async (at: 'model' | 'tool') => {
      const emitted = [...events];
      const committed = (await reader.list(location)).map((checkpoint) => checkpoint.trigger);
      seen.push({ at, events: emitted, committed });
    };
    const offline = offlineModel({
      script: (call) =>
        call.tools.length > 0 && !call.messages.some((message) => message.role === 'assistant')
          ? { toolName: 'probe', input: { query: 'tides' } }
          : undefined,
    });
    // Looks at the database the moment each request reaches the model, before it answers.
    const llm: LanguageModelV3 = Object.create(offline);
    llm.doGenerate = async (options) => {
      await look('model');
      return offline.doGenerate(options);
    };
    const probe = defineTool({
      name: 'probe',
      description: 'Looks a subject up',
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }) => {
        await look('tool');
        return `notes about ${query}`;
      },
    });
    const agents = ['Researcher', 'Writer'].map(
      (role) => new Agent({ role, goal: role, backstory: 'B', llm, tools: [probe] }),
    );
    const crew = new Crew({
      tasks: [
        new Task({ description: 'research tides', expectedOutput: 'notes', agent: agents[0]! }),
        new Task({ description: 'write about tides', expectedOutput: 'a text', agent: agents[1]! }),
      ],
      checkpoint: { provider, location, onEvents: ['*'] },
    });
    await crew.kickoff({ bus });

    expect(seen.map((entry) => entry.at)).toEqual(['model', 'tool', 'model', 'model', 'tool', 'model']);
    for (const entry of seen) {
      // Every event emitted so far (the started event of this very call included) is committed.
      expect(entry.committed).toEqual(entry.events);
      expect(entry.committed.at(-1)).toBe(entry.at === 'model' ? 'llm_call_started' : 'tool_usage_started');
    }
    expect(seen[2]!.committed).toContain('llm_call_completed');
    // Checkpoints really went in groups, and the run's end committed the rest.
    expect(Math.max(...groups)).toBeGreaterThan(1);
    expect((await reader.list(location)).map((checkpoint) => checkpoint.trigger)).toEqual(events);
  });
});

describe('SQLite group commit and a kill right after a paid model call', () => {
  // Run through tsx, not bundled: the child loads better-sqlite3, a native module.
  const script: ChildScript = {
    argv: [
      '--conditions=@crewline/source',
      '--import',
      'tsx',
      fileURLToPath(new URL('./test-support/blocked-after-completion-child.ts', import.meta.url)),
    ],
    dispose: () => undefined,
  };

  it('keeps the completion: a resume pays only for the task that had not run', {
    timeout: 60_000,
  }, async () => {
    const location = join(directory.path, 'runs.db');
    const started = startChild(script, [location]);
    // Killed inside a synchronous handler of the first task_completed, later in the very turn its
    // completion arrived (its group not committed yet, were completions grouped too).
    await started.waitFor(/^blocked$/);
    started.child.kill('SIGKILL');
    expect((await exited(started.child)).signal).toBe('SIGKILL');
    const provider = new SqliteProvider();
    providers.push(provider);
    const triggers = (await provider.list(location)).map((checkpoint) => checkpoint.trigger);
    expect(triggers).toContain('llm_call_completed');
    // The killed run's lease (1 s) runs out before the resume claims the lineage.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const { crew, llm } = blockedCrew();
    const output = await crew.kickoff({ fromCheckpoint: { restoreFrom: location, provider } });
    expect(output.tasksOutput).toHaveLength(2);
    // Only the second task's call; the first task's answer came from the checkpoint.
    expect(llm.calls).toHaveLength(1);
    expect(JSON.stringify(llm.calls[0]!.messages)).toContain('write about tides');
  });
});
