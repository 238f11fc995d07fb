import { describe, expect, it } from 'vitest';
import { useBrowserProject } from '../test-support/tmux-browser.js';
import { hasTmux } from '../test-support/tmux-session.js';

// `crewline checkpoint --lineage` with the start of a run's id, as `list --run` takes it: the
// browser opens on that run (the whole id in its title), not on an empty list.
describe.skipIf(!hasTmux)('the checkpoint browser of one run, named by the start of its id (tmux)', () => {
  const project = useBrowserProject('json');

  it('opens on the run whose id starts with --lineage', async () => {
    const lineage = project.run.checkpoints[0]!.lineageId;
    const session = project.open({ args: ['checkpoint', '--lineage', lineage.slice(0, 8)], width: 160 });
    const text = await session.waitForScreen(
      (current) => current.includes('crew Research crew (3)'),
      'the run in the tree',
    );
    expect(text).toContain(`(lineage ${lineage})`);
    await session.send('q');
    expect(await session.exitStatus()).toBe('0');
  });
});
