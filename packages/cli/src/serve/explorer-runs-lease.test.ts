import { expect, it } from 'vitest';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { ExplorerRuns, type RunRecord } from './explorer-runs.js';

// The trial: a resume from the page of a run a worker held failed with "or fork instead
// (onConflict: 'fork')", an option of the library that the page's user has nowhere to set.
it('a resume from the page of a lineage another process holds says what to do on the page', async () => {
  const project = await temporaryDirectory('crewline-explorer-lease-');
  const run = await writeCrewRun('sqlite', project.path);
  const provider = await providerOf('sqlite');
  const location = provider.resolveLocation(run.location);
  const head = run.checkpoints.at(-1)!;
  const lease = await provider.claimLease!(location, {
    lineageId: head.lineageId,
    owner: 'explorer-lease-holder',
    checkpointId: head.id,
    holder: 'a worker of the explorer test',
    ttlMs: 60_000,
  });
  try {
    const ended = new Promise<RunRecord>((resolve) => {
      const runs = new ExplorerRuns({
        cwd: project.path,
        providers: cliProviderRegistry(),
        provider,
        location,
        reference: async (id) => `${location}#${id}`,
        onUpdate: (event, data) => {
          const record = data as RunRecord;
          if (event === 'run' && record.status !== 'running') resolve(record);
        },
      });
      void runs.start({ checkpoint: head.id, mode: 'resume' });
    });
    const record = await ended;
    expect(record.status).toBe('failed');
    expect(record.error).toContain(
      `lineage "${head.lineageId}" (the run checkpoint ${head.id} belongs to) is being continued by a worker of the explorer test`,
    );
    expect(record.error).toContain(
      'wait for it to end (its process is running on this machine) and press Run again, or fork instead (choose "fork onto a new branch" under "Continue from here" and press Run)',
    );
    expect(record.error).not.toContain('onConflict');
  } finally {
    await provider.releaseLease!(location, lease);
    await provider.close?.();
    await run.close();
    await project.remove();
  }
});
