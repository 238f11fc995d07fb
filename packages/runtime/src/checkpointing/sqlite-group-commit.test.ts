// SQLite commits a run's automatic checkpoints in groups (SqliteProvider's groupCommit, on by
// default): the barrier before each model and tool call (state.durable()) must still find every
// checkpoint of an earlier event committed, as another connection sees the database.
import { join } from 'node:path';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { type BaseEvent, checkpointLifecycleEventTypes, EventBus } from '@crewline/events';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { defineTool } from '../tools/define-tool.js';

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
