// The explorer's resume of the checkpoint its page showed as the latest of its run, when another
// process continues that run while the user reads the plan (review of fixes #2, CRITICAL). The server
// used to judge "the latest" only when the run request came: the user's think time was in the window,
// and a continuation landing in it made the resume move to a new branch and run, and pay for, that
// process's tasks again. The page now sends the run's latest it planned against (`head`), and the
// server refuses (409) when the run went on since, running nothing.
import { existsSync, renameSync } from 'node:fs';
import { captureLogs } from '@crewline/runtime/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

describe('the explorer resumes the checkpoint its page planned against', () => {
  const registry = cliProviderRegistry();
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let run: CrewRun;
  let explorer: RunningExplorer;
  const post = (path: string, body: unknown) =>
    fetch(`http://127.0.0.1:${explorer.port}${path}`, {
      method: 'POST',
      headers: { 'x-crewline-token': explorer.token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const stored = async () => {
    const provider = await providerOf('json');
    return (await provider.list(provider.resolveLocation(run.location))).map((checkpoint) => checkpoint.id);
  };

  beforeEach(async () => {
    project = await temporaryDirectory('crewline-planned-head-');
    run = await writeCrewRun('json', project.path);
    await run.close();
    explorer = await startExplorer({
      opened: await openLocation(run.location, project.path, registry),
      providers: registry,
      cwd: project.path,
      allowResume: true,
    });
  });
  afterEach(async () => {
    await explorer?.close();
    await project?.remove();
  });
  afterAll(() => registry.close());

  it('refuses (409) a resume of the latest the page showed once another process continued the run', async () => {
    const last = run.checkpoints.at(-1)!;
    const head = run.checkpoints.at(-2)!;
    // The run as the page shows it: its last task still to run.
    const aside = `${last.reference}.aside`;
    renameSync(last.reference, aside);
    const planned = await post(`/api/checkpoints/${head.id}/plan`, { mode: 'resume' });
    expect(planned.status).toBe(200);
    expect(((await planned.json()) as { olderCheckpoint?: unknown }).olderCheckpoint).toBeUndefined();
    // While the user reads the plan, another process runs task 3.
    renameSync(aside, last.reference);
    expect(existsSync(last.reference)).toBe(true);
    const logs = captureLogs();
    const response = await post('/api/runs', { checkpoint: head.id, mode: 'resume', head: head.id }).finally(
      () => logs.stop({ allowUnexpected: true }),
    );
    const body = (await response.json()) as { error?: string };
    expect(response.status).toBe(409);
    expect(body.error).toContain(
      `checkpoint ${head.id} was the latest of its run when it was read, and another process continued that run since (its latest is now ${last.id}); nothing was run`,
    );
    expect(body.error).not.toMatch(/restoreFrom|onConflict|fork\(\)/);
    expect(body.error).toContain('fork onto a new branch');
    expect(logs.records.some((record) => record.message.includes('is not the latest of its run'))).toBe(
      false,
    );
    expect((await stored()).sort()).toEqual(run.checkpoints.map((checkpoint) => checkpoint.id).sort());
  }, 60_000);

  it('refuses (409) a resume planned against an older latest: the plan it showed no longer holds', async () => {
    const [first] = run.checkpoints;
    const last = run.checkpoints.at(-1)!;
    const middle = run.checkpoints.at(-2)!;
    const response = await post('/api/runs', { checkpoint: first!.id, mode: 'resume', head: middle.id });
    const body = (await response.json()) as { error?: string };
    expect(response.status).toBe(409);
    expect(body.error).toContain(`its latest was ${middle.id} then, and is now ${last.id}`);
    expect((await stored()).sort()).toEqual(run.checkpoints.map((checkpoint) => checkpoint.id).sort());
  }, 60_000);

  it('takes head only as a checkpoint id, and only for a resume', async () => {
    const [first] = run.checkpoints;
    for (const body of [
      { checkpoint: first!.id, mode: 'resume', head: 3 },
      { checkpoint: first!.id, mode: 'fork', head: first!.id },
    ]) {
      const response = await post('/api/runs', body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error?: string }).error).toMatch(/head/);
    }
  });
});
