// A run started from the explorer's page that fails because another process continued its run after
// the server read the checkpoint as the latest says how to go on in the page's words (review of fixes
// #4): the runtime's message advised `restoreFrom` and `onConflict: 'fork', or fork()`, options the
// page does not have.
import { existsSync, renameSync } from 'node:fs';
import { CheckpointRestoreStartedEvent, eventBus } from '@crewline/events';
import { captureLogs } from '@crewline/runtime/testing';
import { expect, it } from 'vitest';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { ExplorerRuns } from './explorer-runs.js';

it("says the conflict of a run continued since it was read in the page's words", async () => {
  const project = await temporaryDirectory();
  const run = await writeCrewRun('json', project.path);
  const registry = cliProviderRegistry();
  const logs = captureLogs();
  try {
    const provider = await providerOf('json');
    const location = provider.resolveLocation(run.location);
    const last = run.checkpoints.at(-1)!;
    const head = run.checkpoints.at(-2)!;
    const aside = `${last.reference}.aside`;
    renameSync(last.reference, aside);
    // Another process writes the run's next checkpoint once the run has started.
    const continuedElsewhere = eventBus.on(CheckpointRestoreStartedEvent, () => {
      if (existsSync(aside)) renameSync(aside, last.reference);
    });
    const runs = new ExplorerRuns({
      cwd: project.path,
      providers: registry,
      provider,
      location,
      reference: async (id) => `${location}#${id}`,
      onUpdate: () => undefined,
    });
    try {
      await runs.start({ checkpoint: head.id, mode: 'resume', head: head.id });
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
      `checkpoint ${head.id} was the latest of its run when it was read, and another process continued that run since (its latest is now ${last.id}); nothing was run`,
    );
    expect(record!.error).not.toMatch(/restoreFrom|onConflict|fork\(\)/);
    expect(record!.error).toContain(`open checkpoint ${last.id}, the run's latest, and resume it`);
    expect(record!.error).toContain('choose "fork onto a new branch" under "Continue from here"');
  } finally {
    logs.stop({ allowUnexpected: true });
    await registry.close();
    await run.close();
    await project.remove();
  }
}, 90_000);
