import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { branchTaken, renameInBrowser } from './branch-taken.js';
import { continueRun } from './continue-run.js';

let project: Awaited<ReturnType<typeof temporaryDirectory>>;
let run: CrewRun;

beforeAll(async () => {
  project = await temporaryDirectory('crewline-branch-taken-');
  run = await writeCrewRun('json', project.path);
});
afterAll(async () => {
  await run?.close();
  await project?.remove();
});

// The browser's fork onto a branch that has checkpoints said "(the `branch` option)", an option of
// the library its user never sees: it says what to do in the browser.
it("the runtime's refusal of a fork onto a taken branch, in the browser's words", async () => {
  const refusal = await continueRun({
    reference: run.checkpoints[0]!.reference,
    mode: 'fork',
    branch: 'main',
    cwd: project.path,
  }).catch((error: unknown) => error);
  expect((refusal as Error).message).toContain('already exists');
  const said = branchTaken(refusal, 'main', renameInBrowser);
  expect(said?.message).toContain('branch "main" already exists in');
  expect(said?.message).toContain('press f on the checkpoint again and type another branch name');
  expect(said?.message).not.toContain('option');
  expect(branchTaken(refusal, 'other', renameInBrowser)).toBeUndefined();
});
