import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type LogRecord, setLogSink } from '@crewline/events';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { allFiles, offlineModel, temporaryDirectory } from './support/fixtures.js';
import { importIfInstalled } from './support/optional-package.js';

// Planted credentials: one in the environment, one passed in through kickoff inputs.
const environmentKey = 'sk-proj-PLANTEDenvKEY0123456789abcdefXYZ';
const inputKey = 'sk-PLANTEDinputKEY9876543210fedcbaQRS';

let directory: { path: string; cleanup: () => void };
let previousKey: string | undefined;
const logs: LogRecord[] = [];

beforeEach(() => {
  directory = temporaryDirectory();
  previousKey = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = environmentKey;
  logs.length = 0;
  setLogSink((record) => void logs.push(record));
});

afterEach(() => {
  if (previousKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = previousKey;
  setLogSink(null);
  directory.cleanup();
});

// Undefined only when the optional peer is not installed; a broken install fails the file instead.
async function sqliteProvider(): Promise<CheckpointProvider | undefined> {
  const module = await importIfInstalled<{ SqliteProvider: new () => CheckpointProvider }>(
    '@crewline/provider-sqlite',
  );
  return module ? new module.SqliteProvider() : undefined;
}

const hasSqlite = (await sqliteProvider()) !== undefined;

function crewWithSecrets(location: string, provider?: CheckpointProvider): Crew {
  const llm = offlineModel();
  const researcher = new Agent({ role: 'Researcher', goal: 'Research {topic}', backstory: 'Expert', llm });
  // Never runs, but is stored: only its model id may reach the checkpoint, never the key it would use.
  const advisor = new Agent({
    role: 'Advisor',
    goal: 'Advise',
    backstory: 'Expert',
    llm: 'openai:gpt-4o-mini',
  });
  return new Crew({
    agents: [researcher, advisor],
    tasks: [
      new Task({
        description: 'Research {topic}; the account note says {note}',
        expectedOutput: 'bullets',
        agent: researcher,
      }),
      new Task({ description: 'Summarize for {topic}', expectedOutput: 'paragraph', agent: researcher }),
    ],
    checkpoint: { location, onEvents: ['*'], ...(provider ? { provider } : {}) },
  });
}

function expectNoSecretIn(bytes: Buffer, where: string): void {
  for (const secret of [environmentKey, inputKey]) {
    expect(bytes.includes(Buffer.from(secret)), `${secret} found in ${where}`).toBe(false);
  }
}

describe('credentials never reach a checkpoint', () => {
  it('JSON provider: no byte of any file holds a planted key', async () => {
    const location = join(directory.path, 'cp');
    await crewWithSecrets(location).kickoff({
      inputs: { topic: 'AI', apiKey: inputKey, note: `use ${inputKey}` },
    });
    const files = allFiles(location);
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) expectNoSecretIn(readFileSync(join(location, file)), file);
    const text = readFileSync(join(location, files.at(-1)!), 'utf8');
    expect(text).toContain('[REDACTED]');
    expect(text).toContain('openai:gpt-4o-mini');
    expectNoSecretIn(Buffer.from(JSON.stringify(logs)), 'logs');
  });

  // Skipped where the optional peer @crewline/provider-sqlite is not installed.
  it.skipIf(!hasSqlite)(
    'SQLite provider: not in the database, its WAL or its shared memory file',
    async () => {
      const provider = (await sqliteProvider())!;
      const location = join(directory.path, 'checkpoints.db');
      await crewWithSecrets(location, provider).kickoff({
        inputs: { topic: 'AI', apiKey: inputKey, note: `use ${inputKey}` },
      });
      const files = allFiles(directory.path);
      expect(files.some((file) => file.startsWith('checkpoints.db'))).toBe(true);
      for (const file of files) expectNoSecretIn(readFileSync(join(directory.path, file)), file);
      await provider.close?.();
      for (const file of allFiles(directory.path))
        expectNoSecretIn(readFileSync(join(directory.path, file)), file);
    },
  );
});
