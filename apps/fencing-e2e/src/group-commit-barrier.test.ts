// SqliteProvider (with `groupCommit: true`) and PostgresProvider commit a run's automatic
// checkpoints in groups (writeBatch: one transaction for those queued between two model or tool
// calls): the barrier before each model and tool call (state.durable()) must still find every
// checkpoint of an earlier event committed, as another connection (another process: the CLI, a
// resumer, a worker) sees the database.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BaseEvent, checkpointLifecycleEventTypes, EventBus } from '@crewline/events';
import { PostgresProvider } from '@crewline/provider-postgres';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Agent, Crew, defineTool, Task } from '@crewline/runtime';
import { type OfflineModel, offlineModel } from '@crewline/runtime/testing';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { describeWithPostgres, dropLocation, temporaryLocation } from '@crewline/test-support/postgres';
import { afterEach, describe, expect, it } from 'vitest';

const lifecycle = new Set<string>(checkpointLifecycleEventTypes);

/** The probe tool's input, as a Standard Schema of its own (this app does not depend on zod). */
const queryInput = {
  '~standard': {
    version: 1,
    vendor: 'crewline-test',
    validate: (value: unknown) =>
      typeof (value as { query?: unknown } | null)?.query === 'string'
        ? { value: value as { query: string } }
        : { issues: [{ message: 'query must be a string', path: ['query'] }] },
    types: undefined as unknown as { input: { query: string }; output: { query: string } },
  },
} as const;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A store, and a second provider on it: what another process sees of it. */
interface Store {
  provider: CheckpointProvider & Required<Pick<CheckpointProvider, 'writeBatch'>>;
  reader: CheckpointProvider;
  location: string;
}

function sqliteStore(): Store {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-group-commit-'));
  const provider = new SqliteProvider({ groupCommit: true });
  const reader = new SqliteProvider();
  cleanups.push(() => {
    provider.close();
    reader.close();
    rmSync(directory, { recursive: true, force: true });
  });
  return { provider, reader, location: join(directory, 'runs.db') };
}

function postgresStore(): Store {
  const location = temporaryLocation();
  const provider = new PostgresProvider({ poolSize: 2 });
  // Its own pool: what another process would see of the database.
  const reader = new PostgresProvider({ poolSize: 1 });
  cleanups.push(async () => {
    await provider.close();
    await reader.close();
    await dropLocation(location);
  });
  return { provider, reader, location };
}

async function expectBarrierFindsEverythingCommitted({ provider, reader, location }: Store): Promise<void> {
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
  const llm: OfflineModel = Object.create(offline);
  llm.doGenerate = async (options) => {
    await look('model');
    return offline.doGenerate(options);
  };
  const probe = defineTool({
    name: 'probe',
    description: 'Looks a subject up',
    inputSchema: queryInput,
    jsonSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
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
}

const claim =
  'has every checkpoint of an earlier event committed when a model request or tool execution starts';

describe('SQLite group commit and the barrier before model and tool calls', () => {
  it(claim, () => expectBarrierFindsEverythingCommitted(sqliteStore()));
});

describeWithPostgres('Postgres group commit and the barrier before model and tool calls', () => {
  it(claim, () => expectBarrierFindsEverythingCommitted(postgresStore()));
});
