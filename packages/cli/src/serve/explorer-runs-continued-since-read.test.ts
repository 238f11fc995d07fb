// The explorer's resume of the latest checkpoint of a run that another process continues after the
// server read it: refused with the runtime's conflict, as `crewline checkpoint resume` is (297993e),
// instead of moving to a new branch and paying again for what that process ran.
import { existsSync, renameSync } from 'node:fs';
import { CheckpointRestoreStartedEvent, eventBus } from '@crewline/events';
import { captureLogs } from '@crewline/runtime/testing';
import { expect, it } from 'vitest';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { ExplorerRuns } from './explorer-runs.js';

it('fails the run with the conflict when the run was continued since the server read its latest', async () => {
  const project = await temporaryDirectory();
  const run = await writeCrewRun('json', project.path);
  const logs = captureLogs();
  try {
    const provider = await providerOf('json');
    const location = provider.resolveLocation(run.location);
    // The run as the server reads it: its last task still to run. Its last checkpoint, set aside, is
    // what the other process writes once the server has read the checkpoint.
    const last = run.checkpoints.at(-1)!;
    const head = run.checkpoints.at(-2)!;
    const aside = `${last.reference}.aside`;
    renameSync(last.reference, aside);
    const continuedElsewhere = eventBus.on(CheckpointRestoreStartedEvent, () => {
      if (existsSync(aside)) renameSync(aside, last.reference);
    });
    const runs = new ExplorerRuns({
      cwd: project.path,
      providers: cliProviderRegistry(),
      provider,
      location,
      reference: async (id) => `${location}#${id}`,
      onUpdate: () => undefined,
    });
    try {
      await runs.start({ checkpoint: head.id, mode: 'resume' });
      for (let waited = 0; runs.running > 0; waited += 20) {
        if (waited > 60_000) throw new Error('the run did not end within 60 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      continuedElsewhere();
    }
    const [record] = runs.list();
    expect(record!.status).toBe('failed');
    expect(record!.error).toContain(
      `checkpoint ${head.id} was the latest of its run when it was read, and another process continued that run since (its latest is now ${last.id})`,
    );
    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual(
      run.checkpoints.map((checkpoint) => checkpoint.id),
    );
  } finally {
    logs.stop({ allowUnexpected: true });
    await run.close();
    await project.remove();
  }
}, 90_000);
