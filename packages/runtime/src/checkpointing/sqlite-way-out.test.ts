// A run checkpointing to SQLite through the runtime's own providers (a `.db` location, no registry
// passed) leaves its database whole when the process ends: a copy of the `.db` file alone (a backup,
// an scp) lists every checkpoint, with nothing left behind in a `-wal` file beside it.
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exited, startChild, tsxChildScript } from '../e2e/support/child-process.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';

const script = tsxChildScript(fileURLToPath(new URL('./test-support/sqlite-crew-child.ts', import.meta.url)));

let directory: { path: string; cleanup: () => void };
beforeAll(() => {
  directory = temporaryDirectory('crewline-way-out-');
});
afterAll(() => directory.cleanup());

async function listed(location: string): Promise<string[]> {
  const reader = new SqliteProvider();
  try {
    return (await reader.list(location)).map((checkpoint) => checkpoint.id).sort();
  } finally {
    reader.close();
  }
}

/** Runs the child to its end (`end`, see sqlite-crew-child.ts), a SIGINT once it is ready if asked. */
async function runChild(end: string, interrupt: boolean) {
  const location = join(directory.path, `${end}.db`);
  const started = startChild(script, [location, end]);
  if (interrupt) {
    await started.waitFor(/^ready$/);
    started.child.kill('SIGINT');
  }
  const result = await exited(started.child);
  // The copy first: it is what a backup taken now holds; reading the original comes after.
  const copy = join(directory.path, `${end}-copy.db`);
  copyFileSync(location, copy);
  return {
    ...result,
    stderr: started.stderr(),
    lines: started.lines,
    walLeft: existsSync(`${location}-wal`),
    original: await listed(location),
    copy: await listed(copy),
  };
}

describe('the SQLite database a run leaves when the process ends', { timeout: 60_000 }, () => {
  it('holds every checkpoint in the .db itself after Ctrl+C', async () => {
    const result = await runChild('signal', true);
    expect(result.signal, result.stderr).toBe('SIGINT');
    expect(result.lines).not.toContain('finished');
    expect(result.original.length).toBeGreaterThan(3);
    expect(result.copy).toEqual(result.original);
    expect(result.walLeft).toBe(false);
  });

  it('holds every checkpoint in the .db itself after Ctrl+C with a provider the program made', async () => {
    const result = await runChild('signal-own', true);
    expect(result.signal, result.stderr).toBe('SIGINT');
    expect(result.original.length).toBeGreaterThan(3);
    expect(result.copy).toEqual(result.original);
    expect(result.walLeft).toBe(false);
  });

  it('holds every checkpoint in the .db itself when an application SIGINT handler exits', async () => {
    const result = await runChild('signal-exit', true);
    expect(result.code, result.stderr).toBe(7);
    expect(result.original.length).toBeGreaterThan(3);
    expect(result.copy).toEqual(result.original);
    expect(result.walLeft).toBe(false);
  });

  it('holds every checkpoint in the .db itself when the program calls process.exit after the run', async () => {
    const result = await runChild('exit', false);
    expect(result.code, result.stderr).toBe(0);
    expect(result.lines).toContain('finished');
    expect(result.copy).toEqual(result.original);
    expect(result.walLeft).toBe(false);
  });

  it('holds every checkpoint in the .db itself when the process ends on its own after the run', async () => {
    const result = await runChild('return', false);
    expect(result.code, result.stderr).toBe(0);
    expect(result.copy).toEqual(result.original);
    expect(result.walLeft).toBe(false);
  });
});
