import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { redactSecretsInText, registerEnvironmentSecrets } from '@crewline/events';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { allFiles, offlineModel, temporaryDirectory } from './support/fixtures.js';
import { importIfInstalled } from './support/optional-package.js';

// A Gmail app password as Google shows it: 16 random lower-case letters in groups of four. Letters
// only, it is no less a credential (SPEC §8: every credential read from the environment is redacted).
const appPassword = 'qwhx kzvb nmtr plsd';

let directory: { path: string; cleanup: () => void };

beforeEach(() => {
  directory = temporaryDirectory();
  process.env.SMTP_PASSWORD = appPassword;
  registerEnvironmentSecrets();
});

afterEach(() => {
  delete process.env.SMTP_PASSWORD;
  directory.cleanup();
});

async function sqliteProvider(): Promise<CheckpointProvider | undefined> {
  const module = await importIfInstalled<{ SqliteProvider: new () => CheckpointProvider }>(
    '@crewline/provider-sqlite',
  );
  return module ? new module.SqliteProvider() : undefined;
}

const hasSqlite = (await sqliteProvider()) !== undefined;

async function runWithPassword(location: string, provider?: CheckpointProvider): Promise<void> {
  const llm = offlineModel();
  const agent = new Agent({ role: 'Mailer', goal: 'Send mail', backstory: 'Expert', llm });
  await new Crew({
    agents: [agent],
    tasks: [new Task({ description: 'Log in to SMTP with {note}', expectedOutput: 'ok', agent })],
    checkpoint: { location, onEvents: ['*'], ...(provider ? { provider } : {}) },
  }).kickoff({ inputs: { note: `password ${appPassword}, or SMTP_PASSWORD=${appPassword}` } });
}

function filesHolding(root: string, secret: string): string[] {
  return allFiles(root).filter((file) => readFileSync(join(root, file)).includes(Buffer.from(secret)));
}

it('a letter-only password of the environment (a Gmail app password) is redacted by value', () => {
  expect(redactSecretsInText(`logged in with ${appPassword} ok`)).toBe('logged in with [REDACTED] ok');
  // The assignment pattern stops at the first space: the value backs it up.
  expect(redactSecretsInText(`SMTP_PASSWORD=${appPassword}`)).not.toMatch(/kzvb|nmtr|plsd/);
});

it('JSON provider: no file of the checkpoint holds a letter-only password of the environment', async () => {
  const location = join(directory.path, 'cp');
  await runWithPassword(location);
  expect(allFiles(location).length).toBeGreaterThan(3);
  expect(filesHolding(location, appPassword)).toEqual([]);
  expect(filesHolding(location, 'kzvb nmtr')).toEqual([]);
});

it.skipIf(!hasSqlite)(
  'SQLite provider: no file holds a letter-only password of the environment',
  async () => {
    const provider = (await sqliteProvider())!;
    await runWithPassword(join(directory.path, 'checkpoints.db'), provider);
    await provider.close?.();
    expect(allFiles(directory.path).some((file) => file.startsWith('checkpoints.db'))).toBe(true);
    expect(filesHolding(directory.path, appPassword)).toEqual([]);
    expect(filesHolding(directory.path, 'kzvb nmtr')).toEqual([]);
  },
);
