import { copyFile, mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { forkInterruptedAtThirdTask, writeSlowModelConfig } from '../test-support/interrupted-fork.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { runCrewlineProcess } from '../test-support/subprocess.js';

const projects = new URL('../../node_modules/.crewline-test/', import.meta.url).pathname;

async function walSize(database: string): Promise<number> {
  return (await stat(`${database}-wal`).catch(() => undefined))?.size ?? 0;
}

describe('a CLI command that ends closes its SQLite database: nothing is left only in the -wal file', () => {
  const project = join(projects, `wal-${process.pid}`);
  let run: CrewRun;

  beforeAll(async () => {
    await mkdir(project, { recursive: true });
    run = await writeCrewRun('sqlite', project);
    await run.close();
  });
  afterAll(() => rm(project, { recursive: true, force: true }));

  it.each([
    ['resume', []],
    ['fork', ['--quiet']],
  ])(
    'checkpoint %s: a copy of the .db alone lists every checkpoint',
    async (command, flags) => {
      const result = await runCrewlineProcess(
        ['checkpoint', command, `.checkpoints.db#${run.checkpoints[1]!.id}`, ...flags],
        { cwd: project },
      );
      expect(result.stderr).not.toMatch(/crewline: /);
      expect(result.code).toBe(0);
      expect(await walSize(run.location)).toBe(0);
      const copy = join(project, `copy-${command}.db`);
      await copyFile(run.location, copy);
      const provider = await providerOf('sqlite');
      try {
        const original = await provider.list(provider.resolveLocation(run.location));
        const copied = await provider.list(provider.resolveLocation(copy));
        expect(copied.map((checkpoint) => checkpoint.id)).toEqual(
          original.map((checkpoint) => checkpoint.id),
        );
        expect(copied.length).toBeGreaterThan(run.checkpoints.length);
      } finally {
        await provider.close?.();
      }
    },
    60_000,
  );
});

/** A SQLite provider with options of its own, which its checkpoints store. */
async function sqliteProviderWith(options: Record<string, unknown>): Promise<CheckpointProvider> {
  const specifier = '@crewline/provider-sqlite';
  const { SqliteProvider } = (await import(/* @vite-ignore */ specifier)) as {
    SqliteProvider: new (options: Record<string, unknown>) => CheckpointProvider;
  };
  return new SqliteProvider(options);
}

// With default options the fork writes through the registry's shared provider; with options of the
// checkpoint's own (synchronous 'full' here) through a provider the registry rebuilt with them, which
// the way out of a signal has to close too.
describe.each([
  ['default options', {}],
  ["synchronous 'full'", { synchronous: 'full' }],
])('Ctrl+C during a fork on a SQLite location written with %s', (name, providerOptions) => {
  const project = join(projects, `wal-interrupt-${name.replace(/\W+/g, '-')}-${process.pid}`);
  let run: CrewRun;

  beforeAll(async () => {
    await mkdir(project, { recursive: true });
    run = await writeCrewRun('sqlite', project, {
      provider: await sqliteProviderWith(providerOptions),
    });
    await run.close();
    await writeSlowModelConfig(project);
  });
  afterAll(() => rm(project, { recursive: true, force: true }));

  it('leaves every checkpoint it wrote in the .db file, not only in the -wal file', async () => {
    const { code, signal, stderr, written } = await forkInterruptedAtThirdTask(
      project,
      `.checkpoints.db#${run.checkpoints[0]!.id}`,
    );
    expect(signal === 'SIGINT' || code === 130, `${code} ${signal} ${stderr}`).toBe(true);
    expect(await walSize(run.location)).toBe(0);
    const copy = join(project, 'copy.db');
    await copyFile(run.location, copy);
    const provider = await providerOf('sqlite');
    try {
      const copied = await provider.list(provider.resolveLocation(copy));
      expect(copied.map((checkpoint) => checkpoint.id)).toContain(written);
    } finally {
      await provider.close?.();
    }
  }, 60_000);
});
