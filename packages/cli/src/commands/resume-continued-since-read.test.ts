// `crewline checkpoint resume <location>` when another process continues the run after this command
// read its latest checkpoint (review finding, CRITICAL: a task paid twice). The command used to find
// the checkpoint "not the latest of its run" as it started and continue on a new branch, running the
// tasks the other process had run. It stops instead with the runtime's conflict (exit code 1), names
// what happened and how to go on, runs nothing and writes nothing.
import { existsSync, renameSync } from 'node:fs';
import { CheckpointRestoreStartedEvent, CrewlineError, eventBus } from '@crewline/events';
import { captureLogs } from '@crewline/runtime/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exitCodeFor } from '../core/error-boundary.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

describe('resume of a location whose latest checkpoint another process continues meanwhile (json)', () => {
  let project: { path: string; remove: () => Promise<void> };
  let run: CrewRun;

  beforeEach(async () => {
    project = await temporaryDirectory();
    run = await writeCrewRun('json', project.path);
  });
  afterEach(async () => {
    await run.close();
    await project.remove();
  });

  it('stops with the conflict exit code before running anything', async () => {
    // The run as the command reads it: its last task still to run. Its last checkpoint, set aside,
    // is what the other process writes once this command has read the location's latest.
    const last = run.checkpoints.at(-1)!;
    const head = run.checkpoints.at(-2)!;
    expect(existsSync(last.reference)).toBe(true);
    const aside = `${last.reference}.aside`;
    renameSync(last.reference, aside);
    const continuedElsewhere = eventBus.on(CheckpointRestoreStartedEvent, () => {
      if (existsSync(aside)) renameSync(aside, last.reference);
    });
    const logs = captureLogs();
    const result = await runCommand(['checkpoint', 'resume', run.relative], { cwd: project.path }).finally(
      () => {
        continuedElsewhere();
        logs.stop({ allowUnexpected: true });
      },
    );

    expect(existsSync(aside)).toBe(false);
    expect(result.code).toBe(exitCodeFor(new CrewlineError('runtime', 'conflict', 'held')));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `checkpoint ${head.id} was the latest of its run when it was read, and another process continued that run since (its latest is now ${last.id})`,
    );
    expect(result.stderr).toMatch(/Resume again .* or fork from/);
    expect(result.stdout).not.toMatch(/task 3 write started/);
    expect(logs.records.some((record) => record.message.includes('is not the latest of its run'))).toBe(
      false,
    );
    const listed = JSON.parse(
      (await runCommand(['checkpoint', 'list', run.relative, '--json'], { cwd: project.path })).stdout,
    ) as { checkpoints: { id: string }[] };
    expect(listed.checkpoints.map((checkpoint) => checkpoint.id)).toEqual(
      run.checkpoints.map((checkpoint) => checkpoint.id),
    );
  });
});
