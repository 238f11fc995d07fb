import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { sourceCommand } from '../test-support/subprocess.js';

// A project inside this package, so that its crewline.config.mjs resolves @crewline/runtime.
const packageModules = fileURLToPath(new URL('../../node_modules/', import.meta.url));
let project: string;
let run: CrewRun;

beforeAll(async () => {
  project = await mkdtemp(join(packageModules, '.crewline-interrupt-'));
  run = await writeCrewRun('json', project);
  // The model the checkpoints name, slowed down: Ctrl+C lands while a task runs.
  await writeFile(
    join(project, 'crewline.config.mjs'),
    `import { offlineModel } from '@crewline/runtime/testing';
const model = offlineModel({ name: 'cli-test', latencyMs: 3000 });
export default { models: { 'offline:cli-test': () => model } };
`,
  );
});
afterAll(async () => {
  await run?.close();
  if (project !== undefined) await rm(project, { recursive: true, force: true });
});

// A fork stopped with Ctrl+C ended with status 130 and not a word about where it stopped.
it('Ctrl+C during a fork says where the run stopped and how to continue it, then ends as interrupted', async () => {
  const child = spawn(process.execPath, sourceCommand(['checkpoint', 'fork', run.checkpoints[0]!.id]), {
    cwd: project,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
    child.on('close', () => reject(new Error(`fork ended before its second task: ${stdout}${stderr}`)));
  });
  child.kill('SIGINT');
  const { code, signal } = await ended;
  expect(signal === 'SIGINT' || code === 130, `${code} ${signal}`).toBe(true);
  const short = written.slice(written.lastIndexOf('-') + 1);
  expect(stderr).toContain(
    `crewline: interrupted; the run stopped after checkpoint ${short} on branch fork/`,
  );
  expect(stderr).toContain(`continue it with: crewline checkpoint resume ${short} --location ./.checkpoints`);
}, 60_000);
