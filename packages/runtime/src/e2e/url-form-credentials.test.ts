import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { registerEnvironmentSecrets } from '@crewline/events';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { allFiles, offlineModel, temporaryDirectory } from './support/fixtures.js';
import { importIfInstalled } from './support/optional-package.js';

// URL passwords in the forms JDBC drivers and the worker README use (SPEC §8: every credential read
// from the environment is redacted), and a password that is only the environment's user name.
const environment = {
  CREWLINE_TEST_JDBC_DATABASE_URL: 'jdbc:postgresql://db/app?user=svc&password=jdbcQuery7w',
  CREWLINE_TEST_JDBC_MYSQL_URL: 'jdbc:mysql://svc:jdbcUserInfo8v@db/app',
  CREWLINE_TEST_WORKER_LOCATION: 'postgres://db:5432/app?password=workerQuery9u',
  CREWLINE_TEST_APP_PGPASSWORD: 'appservice',
  PGUSER: 'appservice',
};
const passwords = ['jdbcQuery7w', 'jdbcUserInfo8v', 'workerQuery9u'];

let directory: { path: string; cleanup: () => void };
const previousPgUser = process.env.PGUSER;

beforeEach(() => {
  directory = temporaryDirectory();
  Object.assign(process.env, environment);
  registerEnvironmentSecrets();
});

afterEach(() => {
  for (const name of Object.keys(environment)) delete process.env[name];
  if (previousPgUser !== undefined) process.env.PGUSER = previousPgUser;
  directory.cleanup();
});

async function sqliteProvider(): Promise<CheckpointProvider | undefined> {
  const module = await importIfInstalled<{ SqliteProvider: new () => CheckpointProvider }>(
    '@crewline/provider-sqlite',
  );
  return module ? new module.SqliteProvider() : undefined;
}

const hasSqlite = (await sqliteProvider()) !== undefined;

async function run(location: string, provider?: CheckpointProvider): Promise<void> {
  const llm = offlineModel();
  const agent = new Agent({ role: 'Ops', goal: 'G', backstory: 'B', llm });
  await new Crew({
    agents: [agent],
    tasks: [new Task({ description: 'Use {note}', expectedOutput: 'ok', agent })],
    checkpoint: { location, onEvents: ['*'], ...(provider ? { provider } : {}) },
  }).kickoff({
    inputs: { note: `passwords ${passwords.join(', ')}; user appservice; store postgres://localhost/app` },
  });
}

function filesHolding(root: string, text: string): string[] {
  return allFiles(root).filter((file) => readFileSync(join(root, file)).includes(Buffer.from(text)));
}

it('JSON provider: no file holds a jdbc: or ?password= URL password of the environment', async () => {
  const location = join(directory.path, 'cp');
  await run(location);
  expect(allFiles(location).length).toBeGreaterThan(3);
  for (const password of passwords) expect(filesHolding(location, password), password).toEqual([]);
  // The user name a password merely repeats is not rewritten.
  expect(filesHolding(location, 'user appservice').length).toBeGreaterThan(0);
  expect(filesHolding(location, 'postgres://localhost/app').length).toBeGreaterThan(0);
});

it.skipIf(!hasSqlite)('SQLite provider: neither the database nor its WAL holds them', async () => {
  const provider = (await sqliteProvider())!;
  await run(join(directory.path, 'checkpoints.db'), provider);
  await provider.close?.();
  expect(allFiles(directory.path).some((file) => file.startsWith('checkpoints.db'))).toBe(true);
  for (const password of passwords) expect(filesHolding(directory.path, password), password).toEqual([]);
});
