import { copyFile, mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
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

describe('Ctrl+C during a fork on a SQLite location', () => {
  const project = join(projects, `wal-interrupt-${process.pid}`);
  let run: CrewRun;

  beforeAll(async () => {
    await mkdir(project, { recursive: true });
    run = await writeCrewRun('sqlite', project);
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
