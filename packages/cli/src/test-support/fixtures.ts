import { join } from 'node:path';
import type { CheckpointProvider, StoredCheckpoint } from '@crewline/runtime-state';
import { writeFakeFork, writeFakeRun } from './fake-crew.js';

export type FixtureKind = 'json' | 'sqlite';

export interface Fixture {
  kind: FixtureKind;
  /** Absolute location: a directory (JSON) or a .db file (SQLite). */
  location: string;
  /** Location as typed in the project directory: `.checkpoints` or `.checkpoints.db`. */
  relative: string;
  provider: CheckpointProvider;
  main: StoredCheckpoint[];
  fork: StoredCheckpoint;
}

/** A provider of the given kind (the SQLite one is imported only when asked for). */
export async function providerOf(kind: FixtureKind): Promise<CheckpointProvider> {
  if (kind === 'json') {
    const { JsonProvider } = await import('@crewline/provider-json');
    return new JsonProvider();
  }
  const specifier = '@crewline/provider-sqlite';
  const { SqliteProvider } = (await import(/* @vite-ignore */ specifier)) as {
    SqliteProvider: new () => CheckpointProvider;
  };
  return new SqliteProvider();
}

/**
 * Writes a project's checkpoints into `directory`: a crew run of 3 tasks (6 checkpoints on main,
 * task_started and task_completed) and a fork `experiment` from the 3rd checkpoint.
 */
export async function writeFixture(kind: FixtureKind, directory: string): Promise<Fixture> {
  const relative = kind === 'json' ? '.checkpoints' : '.checkpoints.db';
  const location = join(directory, relative);
  const provider = await providerOf(kind);
  const main = await writeFakeRun({ provider, location, taskCount: 3 });
  const fork = await writeFakeFork(provider, location, main[2]!, 'experiment');
  return { kind, location, relative, provider, main, fork };
}
