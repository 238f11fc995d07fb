import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forkInterruptedAtThirdTask, writeSlowModelConfig } from '../test-support/interrupted-fork.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';

// A project inside this package, so that its crewline.config.mjs resolves @crewline/runtime.
const packageModules = fileURLToPath(new URL('../../node_modules/', import.meta.url));
let project: string;
let run: CrewRun;

beforeAll(async () => {
  project = await mkdtemp(join(packageModules, '.crewline-interrupt-'));
  run = await writeCrewRun('json', project);
  await writeSlowModelConfig(project);
});
afterAll(async () => {
  await run?.close();
  if (project !== undefined) await rm(project, { recursive: true, force: true });
});

// A fork stopped with Ctrl+C ended with status 130 and not a word about where it stopped.
it('Ctrl+C during a fork says where the run stopped and how to continue it, then ends as interrupted', async () => {
  const { code, signal, stderr, written } = await forkInterruptedAtThirdTask(project, run.checkpoints[0]!.id);
  expect(signal === 'SIGINT' || code === 130, `${code} ${signal}`).toBe(true);
  const short = written.slice(written.lastIndexOf('-') + 1);
  expect(stderr).toContain(
    `crewline: interrupted; the run stopped after checkpoint ${short} on branch fork/`,
  );
  expect(stderr).toContain(`continue it with: crewline checkpoint resume ${short} --location ./.checkpoints`);
}, 60_000);
