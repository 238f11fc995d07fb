import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FixtureKind } from '../test-support/fixtures.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// The trial: a fork's progress printed "crew report completed" before its last "checkpoint written"
// lines (a store that writes in the background reports those as they land, after the crew ended).
describe.each<FixtureKind>(['json', 'sqlite'])('the progress lines of a fork (%s)', (kind) => {
  let project: { path: string; remove: () => Promise<void> };
  let run: CrewRun;

  beforeAll(async () => {
    project = await temporaryDirectory();
    run = await writeCrewRun(kind, project.path);
  });
  afterAll(async () => {
    await run.close();
    await project.remove();
  });

  it('end with the crew completed line, after every checkpoint written line', async () => {
    const result = await runCommand(['checkpoint', 'fork', run.checkpoints[0]!.id], { cwd: project.path });
    expect(result.code, result.stderr).toBe(0);
    const progress = result.stdout.split('\n').filter((line) => line.startsWith('  '));
    const completed = progress.findIndex((line) => /crew Research crew completed$/.test(line));
    const written = progress.flatMap((line, index) => (/checkpoint \S+ written/.test(line) ? [index] : []));
    expect(completed, result.stdout).toBeGreaterThan(0);
    expect(written.length, result.stdout).toBeGreaterThan(0);
    expect(Math.max(...written), result.stdout).toBeLessThan(completed);
  });
});
