import { captureLogs } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeInterruptedCrewRun } from '../test-support/interrupted-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

describe('resume and fork of a crew interrupted mid-task, with and without --input', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let midTask: StoredCheckpoint;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });
  const restartWarning =
    'Crew "Interrupted crew" kickoff: task 2 "write" was interrupted; with the changed inputs it starts over instead of continuing its saved conversation, whose prompts hold the old inputs; the 1 model call it had made is made again';

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-interrupted-');
    ({ midTask } = await writeInterruptedCrewRun(project.path, 'offline:interrupted-test'));
  });
  afterAll(async () => {
    await project?.remove();
  });

  it('says before running that the task continues its saved conversation, as the explorer plan does', async () => {
    const logs = captureLogs();
    const result = await crewline('checkpoint', 'fork', midTask.id).finally(() => logs.stop());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      '  task 2 write continues its saved conversation; the 1 model call it had made is not made again\n',
    );
    // Said in the heading, before the run's progress.
    expect(result.stdout.indexOf('continues its saved conversation')).toBeLessThan(
      result.stdout.indexOf('Finished crew'),
    );
  });

  it('with a changed input the restart is said once, by the runtime as the crew kicks off', async () => {
    const logs = captureLogs();
    let result: Awaited<ReturnType<typeof crewline>>;
    try {
      result = await crewline('checkpoint', 'fork', midTask.id, '--input', 'topic=kelp');
      expect(logs.expect(restartWarning)).toHaveLength(1);
      expect(logs.unexpected()).toEqual([]);
    } finally {
      logs.stop({ allowUnexpected: true });
    }
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  changed inputs: topic\n');
    expect(result.stdout).not.toContain('continues its saved conversation');
    expect(result.stdout).not.toContain('starts over');
    expect(result.stdout).toContain('Write on kelp');
  });
});
