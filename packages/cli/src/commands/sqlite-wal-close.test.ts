import { spawn } from 'node:child_process';
import { copyFile, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { runCrewlineProcess, sourceCommand } from '../test-support/subprocess.js';

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
    // The model the checkpoints name, slowed down: Ctrl+C lands while a task runs.
    await writeFile(
      join(project, 'crewline.config.mjs'),
      `import { offlineModel } from '@crewline/runtime/testing';
const model = offlineModel({ name: 'cli-test', latencyMs: 3000 });
export default { models: { 'offline:cli-test': () => model } };
`,
    );
  });
  afterAll(() => rm(project, { recursive: true, force: true }));

  it('leaves every checkpoint it wrote in the .db file, not only in the -wal file', async () => {
    const child = spawn(
      process.execPath,
      sourceCommand(['checkpoint', 'fork', `.checkpoints.db#${run.checkpoints[0]!.id}`]),
      { cwd: project, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal })),
    );
    const written = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /checkpoint (\S+) written/.exec(stdout);
        if (match && /task 3 \S+ started/.test(stdout)) resolve(match[1]!);
      });
      child.on('close', () => reject(new Error(`fork ended before its last task: ${stdout}${stderr}`)));
    });
    child.kill('SIGINT');
    const { code, signal } = await ended;
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
