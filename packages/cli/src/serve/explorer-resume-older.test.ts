// Found by a new-user trial of the explorer: a resume of a checkpoint that is not the newest of its
// run moved quietly to a new branch and ran tasks 2 and 3 again (paid again); the plan said only "not
// finished in this checkpoint" and the run's lines only "forked onto branch fork/…", where
// `crewline checkpoint resume` warns `[runtime] checkpoint … is not the latest of its run …`.
import { captureLogs } from '@crewline/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import type { RunRecord } from './explorer-runs.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

describe('the explorer resumes a checkpoint its run went past', () => {
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

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-resume-older-');
    run = await writeCrewRun('json', project.path);
    await run.close();
    explorer = await startExplorer({
      opened: await openLocation(run.location, project.path, registry),
      providers: registry,
      cwd: project.path,
      allowResume: true,
    });
  });
  afterAll(async () => {
    await explorer?.close();
    await registry.close();
    await project?.remove();
  });

  it('plans it as not the latest, on a new branch, naming the tasks run and paid again', async () => {
    const [first, , last] = run.checkpoints;
    const response = await post(`/api/checkpoints/${first!.id}/plan`, { mode: 'resume' });
    expect(response.status).toBe(200);
    const plan = (await response.json()) as {
      olderCheckpoint?: { headId: string; runAgain: number[]; note: string };
      runs: { number: number; note: string }[];
    };
    expect(plan.olderCheckpoint?.headId).toBe(last!.id);
    expect(plan.olderCheckpoint?.runAgain).toEqual([2, 3]);
    expect(plan.olderCheckpoint?.note).toContain(
      `checkpoint ${first!.id} is not the latest of its run (${last!.id} is); a resume continues on a new branch`,
    );
    expect(plan.olderCheckpoint?.note).toMatch(
      /runs tasks 2 and 3 again, paying again for their model calls/,
    );
    expect(plan.runs.map((task) => task.note)).toEqual([
      `not finished in this checkpoint; completed in the run's later checkpoint ${last!.id}: runs again on the new branch, paid again`,
      `not finished in this checkpoint; completed in the run's later checkpoint ${last!.id}: runs again on the new branch, paid again`,
    ]);
    // The latest checkpoint, and a fork (a new branch by choice), say nothing of it.
    const fork = (await (await post(`/api/checkpoints/${first!.id}/plan`, { mode: 'fork' })).json()) as {
      olderCheckpoint?: unknown;
    };
    expect(fork.olderCheckpoint).toBeUndefined();
  });

  it("shows the runtime's warning in the run's lines", async () => {
    const first = run.checkpoints[0]!;
    const logs = captureLogs();
    let record: RunRecord;
    try {
      const response = await post('/api/runs', { checkpoint: first.id, mode: 'resume' });
      expect(response.status).toBe(202);
      const started = (await response.json()) as RunRecord;
      for (let waited = 0; ; waited += 50) {
        const runs = (await (
          await fetch(`http://127.0.0.1:${explorer.port}/api/runs`, {
            headers: { 'x-crewline-token': explorer.token },
          })
        ).json()) as RunRecord[];
        record = runs.find((entry) => entry.id === started.id)!;
        if (record.status !== 'running') break;
        if (waited > 60_000) throw new Error('the run did not end within 60 s');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      logs.stop({ allowUnexpected: true });
    }
    expect(record.status).toBe('finished');
    expect(record.lines.join('\n')).toMatch(
      new RegExp(
        `warn \\[runtime\\] checkpoint ${first.id} is not the latest of its run \\(${run.checkpoints[2]!.id} is\\); continuing on a new branch, ${record.branch}`,
      ),
    );
  }, 90_000);
});
