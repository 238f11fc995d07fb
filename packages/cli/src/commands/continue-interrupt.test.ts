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
/** A run that checkpoints on SIGINT too, in a project of its own. */
let signalProject: string;
let signalRun: CrewRun;

beforeAll(async () => {
  project = await mkdtemp(join(packageModules, '.crewline-interrupt-'));
  run = await writeCrewRun('json', project);
  await writeSlowModelConfig(project);
  signalProject = await mkdtemp(join(packageModules, '.crewline-interrupt-'));
  signalRun = await writeCrewRun('json', signalProject, { onEvents: ['task_completed', 'SIGINT'] });
  await writeSlowModelConfig(signalProject);
});
afterAll(async () => {
  await run?.close();
  await signalRun?.close();
  if (project !== undefined) await rm(project, { recursive: true, force: true });
  if (signalProject !== undefined) await rm(signalProject, { recursive: true, force: true });
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

// Trial 1127 A: a run that checkpoints on SIGINT writes that checkpoint on its way out, after the
// signal. The report named the checkpoint before it first ("continue it with … 72300332"), then
// the new one: following the first went onto a fork branch. One hint now, naming the last one.
it('Ctrl+C during a fork that checkpoints on SIGINT names the checkpoint written on the way out, once', async () => {
  const { code, signal, stdout, stderr, written } = await forkInterruptedAtThirdTask(
    signalProject,
    signalRun.checkpoints[0]!.id,
  );
  expect(signal === 'SIGINT' || code === 130, `${code} ${signal}`).toBe(true);
  const writtenIds = [...stdout.matchAll(/checkpoint (\S+) written/g)].map((match) => match[1]!);
  const last = writtenIds.at(-1)!;
  expect(last, stdout).not.toBe(written);
  const short = last.slice(last.lastIndexOf('-') + 1);
  expect(stderr.match(/continue it with/g), stderr).toHaveLength(1);
  expect(stderr).toContain(
    `crewline: interrupted; the run stopped after checkpoint ${short} on branch fork/`,
  );
  expect(stderr).toContain(`continue it with: crewline checkpoint resume ${short} --location ./.checkpoints`);
}, 60_000);
