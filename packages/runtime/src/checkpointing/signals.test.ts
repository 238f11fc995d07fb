// Real SIGINTs to real child processes that have another SIGINT listener next to the runtime's: the
// checkpoint is written and the process ends exactly as it would have without crewline. And a run's
// checkpoints still queued at process.exit() are written before its providers close.
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChildScript,
  concurrencyLimit,
  exited,
  prepareChildScript,
  startChild,
  tsxChildScript,
} from '../e2e/support/child-process.js';
import { allFiles, checkpointFiles, readCheckpoint, temporaryDirectory } from '../e2e/support/fixtures.js';

const slot = concurrencyLimit(2);
let directory: { path: string; cleanup: () => void };
let script: ChildScript;
beforeAll(async () => {
  directory = temporaryDirectory('crewline-signals-');
  script = await prepareChildScript(
    fileURLToPath(new URL('./test-support/signal-child.ts', import.meta.url)),
  );
});
afterAll(() => {
  directory.cleanup();
  script.dispose();
});

/** Starts the child, sends SIGINT once it is ready (and again per `again`), and waits for its end. */
function interrupt(listener: string, provider: 'sync' | 'async', again?: RegExp) {
  return slot(async () => {
    const location = join(directory.path, `${listener}-${provider}`);
    const started = startChild(script, [listener, provider, location]);
    await started.waitFor(/^ready$/);
    started.child.kill('SIGINT');
    if (again) {
      await started.waitFor(again);
      // The runtime listens again from the next turn of the event loop; leave it that turn.
      await new Promise((resolve) => setTimeout(resolve, 200));
      started.child.kill('SIGINT');
    }
    const end = await exited(started.child);
    return { ...end, lines: started.lines, stderr: started.stderr(), location };
  });
}

/** The ids of the checkpoints a SQLite database lists, read by a provider of this process. */
async function listed(location: string): Promise<string[]> {
  const reader = new SqliteProvider();
  try {
    return (await reader.list(location)).map((checkpoint) => checkpoint.id).sort();
  } finally {
    reader.close();
  }
}

/** Every file left is a whole checkpoint (no temp file), and each is valid; returns their triggers. */
function checkpointTriggers(location: string): string[] {
  const files = checkpointFiles(location);
  expect(allFiles(location)).toHaveLength(files.length);
  return files.map((file) => readCheckpoint(file).metadata.trigger);
}

describe('SIGINT with another listener in the process', { timeout: 60_000 }, () => {
  it('lets a listener that ends the process only when alone (signal-exit, Ink) end it', async () => {
    const result = await interrupt('exit-when-alone', 'sync');
    expect(result.stderr).toBe('');
    expect(result.lines).toContain('exit hooks ran on SIGINT');
    expect(result.signal).toBe('SIGINT');
    expect(checkpointTriggers(result.location)).toEqual(['SIGINT']);
  });

  it('does the same after an asynchronous write finished', async () => {
    const result = await interrupt('exit-when-alone', 'async');
    expect(result.stderr).toBe('');
    expect(result.lines).toContain('exit hooks ran on SIGINT');
    expect(result.signal).toBe('SIGINT');
    expect(checkpointTriggers(result.location)).toEqual(['SIGINT']);
  });

  it('writes before a handler of the application that calls process.exit, which chooses the code', async () => {
    const result = await interrupt('user-exit', 'sync');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(7);
    expect(result.lines.filter((line) => line.startsWith('user handler'))).toEqual(['user handler 1']);
    expect(checkpointTriggers(result.location)).toEqual(['SIGINT']);
  });

  it('keeps the process alive when the application handles the signal, calling its handler once per signal', async () => {
    const result = await interrupt('user-ignore', 'sync', /^user handler 1$/);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.lines.filter((line) => line.startsWith('user handler'))).toEqual([
      'user handler 1',
      'user handler 2',
    ]);
    expect(result.lines).toContain('done after 2 user handler calls');
    // Both signals reached the run: the runtime listens again after stepping aside for the first.
    expect(checkpointTriggers(result.location)).toEqual(['SIGINT', 'SIGINT']);
  });

  it('exits by the signal when nobody else listens, once the asynchronous write finished', async () => {
    const result = await interrupt('none', 'async');
    expect(result.stderr).toBe('');
    expect(result.signal).toBe('SIGINT');
    expect(checkpointTriggers(result.location)).toEqual(['SIGINT']);
  });
});

describe('SIGTERM while a run ends, its last checkpoints still being written', { timeout: 60_000 }, () => {
  let ending: ChildScript;
  beforeAll(async () => {
    ending = await prepareChildScript(
      fileURLToPath(new URL('./test-support/ending-child.ts', import.meta.url)),
    );
  });
  afterAll(() => ending.dispose());

  it('writes them and gives the lease up before the signal ends the process', async () => {
    const location = join(directory.path, 'ending');
    const started = startChild(ending, [location]);
    // The crew's last event: its checkpoint, and those of the events just before it, are queued
    // (each group of writes takes 400 ms); the run is ending and waits for them.
    await started.waitFor(/^ending$/);
    started.child.kill('SIGTERM');
    const end = await exited(started.child);
    expect(started.stderr()).toBe('');
    expect(end.signal).toBe('SIGTERM');
    // Every checkpoint of the run is on disk, the last one that of its last event.
    expect(checkpointTriggers(location).at(-1)).toBe('crew_kickoff_completed');
    // And the lock on its lineage is gone: the next process continues at once.
    expect(allFiles(join(location, '.leases')).filter((file) => file.endsWith('.lock'))).toEqual([]);
  });
});

describe('process.exit() during a run that writes to a second location', { timeout: 60_000 }, () => {
  it('writes the checkpoints queued for it before its providers close, leaving no SQLite -wal', async () => {
    const result = await slot(async () => {
      const location = join(directory.path, 'second-location');
      const database = join(directory.path, 'second-location.db');
      const script = tsxChildScript(
        fileURLToPath(new URL('./test-support/second-location-exit-child.ts', import.meta.url)),
      );
      const started = startChild(script, [location, database]);
      const end = await exited(started.child);
      // The copy first: it is what a backup taken now holds.
      const copy = join(directory.path, 'second-location-copy.db');
      copyFileSync(database, copy);
      return {
        ...end,
        lines: started.lines,
        stderr: started.stderr(),
        walLeft: existsSync(`${database}-wal`),
        original: await listed(database),
        copy: await listed(copy),
      };
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.lines).toContain('exiting');
    expect(result.original.length).toBeGreaterThan(1);
    expect(result.copy).toEqual(result.original);
    expect(result.walLeft).toBe(false);
  });
});
