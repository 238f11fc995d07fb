import { cpSync, existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import {
  type CheckpointDocument,
  type CheckpointProvider,
  readDocument,
  type StoredCheckpoint,
} from '@crewline/runtime-state';

export type StorageKind = 'json' | 'sqlite';

/**
 * Runs `inspect` with a provider of its own that is closed afterwards. The test process never keeps
 * a SQLite database open between steps: copying a database file from a process that holds it open
 * closes a descriptor of that file, which drops the process's POSIX locks on it (a documented way
 * to corrupt SQLite databases), so every inspection opens and closes its own connection.
 */
export async function inspect<T>(
  kind: StorageKind,
  inspect: (provider: CheckpointProvider) => Promise<T>,
): Promise<T> {
  const provider = kind === 'json' ? new JsonProvider() : new SqliteProvider();
  try {
    return await inspect(provider);
  } finally {
    await provider.close?.();
  }
}

/** The checkpoints of a location (one branch, or all), oldest first; none when it does not exist yet. */
export async function listCheckpoints(
  provider: CheckpointProvider,
  location: string,
  branch?: string,
): Promise<StoredCheckpoint[]> {
  if (!existsSync(location)) return [];
  return provider.list(location, branch === undefined ? undefined : { branch });
}

export function readCheckpoint(
  provider: CheckpointProvider,
  location: string,
  id: string,
): Promise<CheckpointDocument> {
  return readDocument(provider, location, id);
}

/**
 * Every byte a branch's checkpoints hold, by id: what "the original branch is untouched" compares.
 * For JSON the files themselves; for SQLite each checkpoint as read back.
 */
export async function branchContents(
  provider: CheckpointProvider,
  location: string,
  branch: string,
): Promise<Record<string, string>> {
  const contents: Record<string, string> = {};
  for (const entry of await listCheckpoints(provider, location, branch)) {
    const raw = await provider.read(location, entry.id);
    contents[entry.id] = 'text' in raw ? raw.text : JSON.stringify(raw.document);
  }
  return contents;
}

/** Copies a location (a directory, or a database with its -wal/-shm files) to `target`. */
export function copyLocation(kind: StorageKind, location: string, target: string): void {
  if (kind === 'json') {
    cpSync(location, target, { recursive: true });
    return;
  }
  const name = basename(location);
  for (const file of readdirSync(dirname(location))) {
    if (file === name || file.startsWith(`${name}-`)) {
      cpSync(join(dirname(location), file), join(dirname(target), file.replace(name, basename(target))));
    }
  }
}

/** The saved tasks of the crew in a checkpoint: status and raw output. */
export function tasksOf(
  document: CheckpointDocument,
): { name: string; status: string; output?: string; edited?: boolean }[] {
  const crew = document.entities.find((entity) => entity.kind === 'crew');
  return (
    (crew?.data.tasks ?? []) as {
      name: string;
      status: string;
      output: { raw: string; edited: boolean } | null;
    }[]
  ).map((task) => ({
    name: task.name,
    status: task.status,
    ...(task.output ? { output: task.output.raw, edited: task.output.edited } : {}),
  }));
}

/** How many `llm_call_completed` events of each task a checkpoint's history holds. */
export function modelCallsByTask(document: CheckpointDocument): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const event of document.events) {
    if (event.type !== 'llm_call_completed') continue;
    const index = event.context?.taskIndex ?? -1;
    counts[index] = (counts[index] ?? 0) + 1;
  }
  return counts;
}
