import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { hasTmux, TmuxSession } from '../test-support/tmux-session.js';

// `crewline checkpoint --lineage` with the start of a run's id, as `list --run` takes it: the
// browser opens on that run (the whole id in its title), not on an empty list.
describe.skipIf(!hasTmux)('the checkpoint browser of one run, named by the start of its id (tmux)', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let run: CrewRun;
  let session: TmuxSession | undefined;

  beforeAll(async () => {
    project = await temporaryDirectory();
    run = await writeCrewRun('json', project.path);
  });
  afterAll(async () => {
    session?.kill();
    await run?.close();
    await project?.remove();
  });

  it('opens on the run whose id starts with --lineage', async () => {
    const lineage = run.checkpoints[0]!.lineageId;
    session = new TmuxSession(['checkpoint', '--lineage', lineage.slice(0, 8)], {
      cwd: project.path,
      width: 160,
      env: { NO_COLOR: '1' },
    });
    const text = await session.waitForScreen(
      (current) => current.includes('crew Research crew (3)'),
      'the run in the tree',
    );
    expect(text).toContain(`(lineage ${lineage})`);
    await session.send('q');
    expect(await session.exitStatus()).toBe('0');
  });
});
