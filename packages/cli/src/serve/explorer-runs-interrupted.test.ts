// Found by a new-user trial of the explorer: stopping `crewline checkpoint serve` with Ctrl+C said
// nothing of the run it was doing for the page; the user had to find where it got in a listing.
import { captureLogs } from '@crewline/runtime/testing';
import { expect, it } from 'vitest';
import { shortCheckpointId } from '../core/format.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { ExplorerRuns } from './explorer-runs.js';

it('says, for each run still running, that stopping the server interrupts it and how to continue it', async () => {
  const project = await temporaryDirectory();
  const run = await writeCrewRun('json', project.path);
  const logs = captureLogs();
  try {
    const provider = await providerOf('json');
    const location = provider.resolveLocation(run.location);
    let afterFirstWrite: string[] | undefined;
    const runs: ExplorerRuns = new ExplorerRuns({
      cwd: project.path,
      providers: cliProviderRegistry(),
      provider,
      location,
      reference: async (id) => `${location}#${id}`,
      // As Ctrl+C would find it: the run going on, its first checkpoint written.
      onUpdate: (event, data) => {
        if (
          event === 'progress' &&
          afterFirstWrite === undefined &&
          /checkpoint \S+ written/.test(String((data as { line: string }).line))
        )
          afterFirstWrite = runs.interruptions(project.path, 'crewline');
      },
    });
    const first = run.checkpoints[0]!;
    const started = await runs.start({ checkpoint: first.id, mode: 'fork', branch: 'what-if' });
    const beforeAnyWrite = runs.interruptions(project.path, 'crewline');
    // The form's branch is said again: without it, starting over forked onto a generated branch.
    expect(runs.interruptions(project.path, 'npx crewline')[0]).toContain(
      `start over with: npx crewline checkpoint fork ${shortCheckpointId(first.id)} --location ./.checkpoints --branch what-if`,
    );
    expect(beforeAnyWrite).toEqual([
      `crewline: stopping the server interrupted the page's fork of ${shortCheckpointId(first.id)} (run ${started.id}) before it wrote a checkpoint; start over with: crewline checkpoint fork ${shortCheckpointId(first.id)} --location ./.checkpoints --branch what-if`,
    ]);
    for (let waited = 0; runs.running > 0; waited += 20) {
      if (waited > 60_000) throw new Error('the run did not end within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const written = await provider.list(location, { branch: 'what-if' });
    expect(afterFirstWrite).toEqual([
      `crewline: stopping the server interrupted the page's fork of ${shortCheckpointId(first.id)} (run ${started.id}); the run stopped after checkpoint ${shortCheckpointId(written[0]!.id)} on branch what-if; continue it with: crewline checkpoint resume ${shortCheckpointId(written[0]!.id)} --location ./.checkpoints`,
    ]);
    // Ended, a run is not interrupted by stopping the server.
    expect(runs.interruptions(project.path, 'crewline')).toEqual([]);
  } finally {
    logs.stop({ allowUnexpected: true });
    await run.close();
    await project.remove();
  }
}, 90_000);
