import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventBus, type LogRecord, setLogSink } from '@crewline/events';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Flow, persist, start } from '../flow/index.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { Task } from '../task/task.js';
import { allFiles, offlineModel, temporaryDirectory } from './support/fixtures.js';
import { importIfInstalled } from './support/optional-package.js';

// SPEC §8: a password given inside the address of a kickoff input under a plain name (`db`) is
// redacted inside the address by its shape, and by value wherever it is quoted bare: the model's
// answer here, which no name or address marks. Each test plants its own (the registry is
// process-wide, and a password registered by an earlier test would hide a leak).
let planted = 0;
function plantedPassword(): string {
  planted += 1;
  return `hunter${planted}Vx8pass`;
}

let directory: { path: string; cleanup: () => void };
const logs: LogRecord[] = [];

beforeEach(() => {
  directory = temporaryDirectory();
  logs.length = 0;
  setLogSink((record) => void logs.push(record));
});

afterEach(() => {
  setLogSink(null);
  directory.cleanup();
});

async function sqliteProvider(): Promise<CheckpointProvider | undefined> {
  const module = await importIfInstalled<{ SqliteProvider: new () => CheckpointProvider }>(
    '@crewline/provider-sqlite',
  );
  return module ? new module.SqliteProvider() : undefined;
}

const hasSqlite = (await sqliteProvider()) !== undefined;

/** An offline model whose every answer quotes the password bare, as a model reading the prompt may. */
function quotingModel(password: string) {
  return offlineModel({ script: () => ({ text: `Connected; the database password is ${password}.` }) });
}

async function runCrew(password: string, location: string, provider?: CheckpointProvider): Promise<void> {
  const llm = quotingModel(password);
  const agent = new Agent({ role: 'Researcher', goal: 'Research {topic}', backstory: 'B', llm });
  const result = await new Crew({
    agents: [agent],
    tasks: [new Task({ description: 'Research {topic} in the database {db}', expectedOutput: 'x', agent })],
    checkpoint: { location, onEvents: ['*'], ...(provider ? { provider } : {}) },
  }).kickoff({ inputs: { topic: 'AI', db: `postgres://admin:${password}@db.internal:5432/app` } });
  // The model is still sent the value, and the caller still given its answer: only what is written changes.
  expect(llm.calls[0]!.userText).toContain(password);
  expect(result.raw).toContain(password);
}

function filesHolding(root: string, text: string): string[] {
  return allFiles(root).filter((file) => readFileSync(join(root, file)).includes(Buffer.from(text)));
}

it('JSON provider: no file holds the password, the address in the stored inputs shows [REDACTED]', async () => {
  const password = plantedPassword();
  const location = join(directory.path, 'cp');
  await runCrew(password, location);
  expect(allFiles(location).length).toBeGreaterThan(3);
  expect(filesHolding(location, password)).toEqual([]);
  expect(JSON.stringify(logs)).not.toContain(password);
  expect(filesHolding(location, 'the database password is [REDACTED].').length).toBeGreaterThan(0);
  expect(filesHolding(location, 'postgres://admin:[REDACTED]@db.internal:5432/app').length).toBeGreaterThan(
    0,
  );
});

it.skipIf(!hasSqlite)('SQLite provider: neither the database nor its WAL holds the password', async () => {
  const password = plantedPassword();
  const provider = (await sqliteProvider())!;
  await runCrew(password, join(directory.path, 'checkpoints.db'), provider);
  expect(allFiles(directory.path).some((file) => file.startsWith('checkpoints.db'))).toBe(true);
  expect(filesHolding(directory.path, password)).toEqual([]);
  await provider.close?.();
  expect(filesHolding(directory.path, password)).toEqual([]);
});

it('a flow whose state is set from the inputs: neither its checkpoints nor its persisted state hold it', async () => {
  const password = plantedPassword();
  const checkpoints = join(directory.path, 'cp');
  const states = join(directory.path, 'states');
  const llm = quotingModel(password);

  @persist({ location: states })
  class Report extends Flow<{ db: string; answer: string }> {
    initialState = { db: '', answer: '' };

    @start() async check() {
      const agent = new Agent({ role: 'Ops', goal: 'Check databases', backstory: 'B', llm });
      this.state.answer = (await agent.kickoff(`Check ${this.state.db}`)).raw;
      return this.state.answer;
    }
  }

  const flow = new Report({ bus: new EventBus(), checkpoint: { location: checkpoints, onEvents: ['*'] } });
  const result = await flow.kickoff({ inputs: { db: `postgres://admin:${password}@db.internal/app` } });
  expect(result.status).toBe('completed');
  expect(flow.state.answer).toContain(password);
  // With a checkpoint location, the persisted states are saved beside the checkpoints.
  const files = allFiles(directory.path);
  expect(files.some((file) => file.includes('flow-states'))).toBe(true);
  expect(filesHolding(directory.path, password)).toEqual([]);
  expect(filesHolding(checkpoints, 'the database password is [REDACTED].').length).toBeGreaterThan(0);
});

it('a flow persisted with @persist() and no checkpoint option: its saved states do not hold it', async () => {
  const password = plantedPassword();
  const states = join(directory.path, 'states');
  const llm = quotingModel(password);

  @persist({ location: states })
  class Report extends Flow<{ db: string; answer: string }> {
    initialState = { db: '', answer: '' };

    @start() async check() {
      const agent = new Agent({ role: 'Ops', goal: 'Check databases', backstory: 'B', llm });
      this.state.answer = (await agent.kickoff(`Check ${this.state.db}`)).raw;
      return this.state.answer;
    }
  }

  const flow = new Report({ bus: new EventBus() });
  const result = await flow.kickoff({ inputs: { db: `postgres://admin:${password}@db.internal/app` } });
  expect(result.status).toBe('completed');
  expect(flow.state.answer).toContain(password);
  expect(allFiles(states).length).toBeGreaterThan(0);
  expect(filesHolding(directory.path, password)).toEqual([]);
});

it('an address given as a new input on a fork: the forked run writes its password nowhere', async () => {
  const password = plantedPassword();
  const location = join(directory.path, 'cp');
  const crewOf = (llm: ReturnType<typeof offlineModel>) => {
    const agent = new Agent({ role: 'Researcher', goal: 'Research {topic}', backstory: 'B', llm });
    return new Crew({
      agents: [agent],
      tasks: [
        new Task({ description: 'Plan the research of {topic}', expectedOutput: 'x', agent }),
        new Task({ description: 'Research {topic} in the database {db}', expectedOutput: 'x', agent }),
      ],
      checkpoint: { location, onEvents: ['*'] },
    });
  };
  // Interrupted before the second task's call, with an address that holds no password.
  await crewOf(offlineModel({ failOn: [2] }))
    .kickoff({ inputs: { topic: 'AI', db: 'postgres://db.internal:5432/app' } })
    .catch(() => undefined);
  const llm = quotingModel(password);
  const result = await continueFromCheckpoint({
    reference: location,
    mode: 'fork',
    registry: new ProjectRegistry().register({ models: { 'offline:default': llm } }),
    inputs: { db: `postgres://admin:${password}@db.internal:5432/app` },
  });
  expect(result.kind).toBe('crew');
  expect(JSON.stringify(llm.calls)).toContain(password);
  expect(filesHolding(location, password)).toEqual([]);
  expect(filesHolding(location, 'the database password is [REDACTED].').length).toBeGreaterThan(0);
});
