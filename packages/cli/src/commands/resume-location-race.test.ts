// `crewline checkpoint resume <location>` when another process continues the run right after this
// command read the location's latest, before anything else asks the store (review of fixes,
// CRITICAL: a task run and paid twice). The command used to ask the store a second time whether the
// checkpoint it read was still the latest; a continuation landing between the read and that question
// made it "not the latest of its run", and the resume moved to a new branch and ran task 3 again. A
// location asks for its latest: the checkpoint read was the latest by the reading itself, and the
// resume is refused (exit code 1) whatever happens after the read.
import { existsSync, renameSync } from 'node:fs';
import { JsonProvider } from '@crewline/provider-json';
import { captureLogs } from '@crewline/runtime/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

describe('resume of a location continued by another process between the read and any later query (json)', () => {
  let project: { path: string; remove: () => Promise<void> };
  let run: CrewRun;
  const original = JsonProvider.prototype.latest;

  beforeEach(async () => {
    project = await temporaryDirectory();
    run = await writeCrewRun('json', project.path);
  });
  afterEach(async () => {
    JsonProvider.prototype.latest = original;
    await run.close();
    await project.remove();
  });

  /**
   * Runs `args` with the run's last checkpoint written by "another process" as soon as anyone asks
   * the store for the latest checkpoint of one run (branch and lineage): the first such question
   * comes after the command has read the checkpoint it continues.
   */
  async function raced(args: string[]) {
    const last = run.checkpoints.at(-1)!;
    const aside = `${last.reference}.aside`;
    renameSync(last.reference, aside);
    JsonProvider.prototype.latest = function (
      this: JsonProvider,
      ...latestArgs: Parameters<typeof original>
    ) {
      if (latestArgs[1] !== undefined && existsSync(aside)) renameSync(aside, last.reference);
      return original.apply(this, latestArgs);
    } as typeof original;
    const logs = captureLogs();
    try {
      return await runCommand(args, { cwd: project.path });
    } finally {
      JsonProvider.prototype.latest = original;
      logs.stop({ allowUnexpected: true });
      expect(logs.records.some((record) => record.message.includes('is not the latest of its run'))).toBe(
        false,
      );
    }
  }

  it('is refused with the conflict (exit code 1), runs nothing and writes nothing', async () => {
    const last = run.checkpoints.at(-1)!;
    const head = run.checkpoints.at(-2)!;
    const result = await raced(['checkpoint', 'resume', run.relative]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `checkpoint ${head.id} was the latest of its run when it was read, and another process continued that run since (its latest is now ${last.id})`,
    );
    expect(result.stdout).not.toMatch(/task 3/);
    const listed = JSON.parse(
      (await runCommand(['checkpoint', 'list', run.relative, '--json'], { cwd: project.path })).stdout,
    ) as { checkpoints: { id: string; branch: string }[] };
    expect(listed.checkpoints.map((checkpoint) => checkpoint.id).sort()).toEqual(
      run.checkpoints.map((checkpoint) => checkpoint.id).sort(),
    );
  });

  // Review of fixes #4: the refusal ended with the library's advice ("restoreFrom the location",
  // "onConflict: 'fork', or fork()"), options a command line does not have.
  it("says how to go on in the command line's words", async () => {
    const last = run.checkpoints.at(-1)!;
    const head = run.checkpoints.at(-2)!;
    const result = await raced(['checkpoint', 'resume', run.relative]);
    const location = `./${run.relative}`;
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(/restoreFrom|onConflict|fork\(\)/);
    expect(result.stderr).toContain(`crewline checkpoint resume ${location},`);
    expect(result.stderr).toContain(`crewline checkpoint resume ${last.id} --location ${location}`);
    expect(result.stderr).toContain(`crewline checkpoint fork ${head.id} --location ${location}`);
    expect(result.stderr).toContain('--on-conflict fork');
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
