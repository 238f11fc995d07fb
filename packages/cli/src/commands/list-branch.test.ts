import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, writeFixture } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// Trial 3: `checkpoint list --branch nosuch` printed "No checkpoints … on branch nosuch", exit 0,
// while `prune --branch nosuch` refused the same typo with exit 2 and listed the branches.
describe('checkpoint list --branch', () => {
  let project: { path: string; remove: () => Promise<void> };
  let fixture: Fixture;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory();
    fixture = await writeFixture('json', project.path);
  });
  afterAll(async () => {
    await fixture?.provider.close?.();
    await project.remove();
  });

  it('refuses a branch with no checkpoint here as prune does, naming the branches (exit 2)', async () => {
    const listed = await crewline('checkpoint', 'list', fixture.relative, '--branch', 'nosuch');
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain(
      `no branch "nosuch" in ./${fixture.relative} (branches: experiment, main)`,
    );
    expect(listed.stderr).not.toContain('nothing was removed');
    const json = await crewline('checkpoint', 'list', fixture.relative, '--branch', 'nosuch', '--json');
    expect(json.code).toBe(2);
    const pruned = await crewline('prune', fixture.relative, '--keep', '1', '--branch', 'nosuch');
    expect(pruned.stderr).toContain(
      `no branch "nosuch" in ./${fixture.relative} (branches: experiment, main); nothing was removed`,
    );
  });

  it('lists a branch that is there, and says "No checkpoints" when --run leaves none of it', async () => {
    const listed = await crewline('checkpoint', 'list', fixture.relative, '--branch', 'experiment');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('experiment');
    // The run of branch main has no checkpoint on the fork's branch: an empty result, not a typo.
    const all = JSON.parse((await crewline('checkpoint', 'list', fixture.relative, '--json')).stdout) as {
      checkpoints: { branch: string; lineageId: string }[];
    };
    const mainRun = all.checkpoints.find((checkpoint) => checkpoint.branch === 'main')!.lineageId;
    const none = await crewline(
      'checkpoint',
      'list',
      fixture.relative,
      '--branch',
      'experiment',
      '--run',
      mainRun.slice(0, 8),
    );
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toContain('No checkpoints');
  });

  // Trial 3: `list --run nosuch` printed "No checkpoints", exit 0, where prune refused it (exit 2).
  it('refuses a --run that names no run here, as prune does (exit 2)', async () => {
    for (const branch of [[], ['--branch', 'experiment']]) {
      const listed = await crewline('checkpoint', 'list', fixture.relative, ...branch, '--run', 'zzzz');
      expect(listed.code).toBe(2);
      expect(listed.stderr).toContain(`no run "zzzz" in ./${fixture.relative} (see the RUN column of`);
    }
    const pruned = await crewline('prune', fixture.relative, '--keep', '1', '--run', 'zzzz');
    expect(pruned.code).toBe(2);
    expect(pruned.stderr).toContain('; nothing was removed');
  });
});
