import { PostgresProvider } from '@crewline/provider-postgres';
import { Agent, Crew, registerProject, Task } from '@crewline/runtime';
import { captureLogs, type OfflineModelCall, offlineModel } from '@crewline/runtime/testing';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { Worker } from './worker.js';

const model = offlineModel({ name: 'fork-interrupted' });
registerProject({ models: { 'fork-interrupted:model': model } });

function crewOf(): Crew {
  const writer = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Plain', llm: model });
  return new Crew({
    name: 'interrupted-crew',
    agents: [writer],
    tasks: ['Outline {topic}', 'Write on {topic}'].map(
      (description) => new Task({ description, expectedOutput: 'A few lines', agent: writer }),
    ),
  });
}

/** The task a call worked on, as its prompt names it (`Write on kelp`). */
function taskOf(call: OfflineModelCall): string {
  return /Current task: ([^\n"\\]+)/.exec(JSON.stringify(call.prompt))?.[1] ?? '?';
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A run stopped in its last task after that task's model call completed: the run's checkpoints
 * after that call are removed and the run is marked cancelled, as a cancel there leaves it (a cancel
 * timed by the clock would make the test flaky).
 */
async function interruptedRun() {
  const location = temporaryLocation();
  const queue = new RunQueue({ location, create: true });
  const provider = new PostgresProvider();
  const worker = new Worker({ location, runs: { crews: { report: crewOf } }, pollIntervalMs: 100 });
  cleanups.push(async () => {
    await worker.stop({ handBack: false });
    await queue.close();
    await provider.close();
    await dropLocation(location);
    const schema = new URL(location).searchParams.get('schema');
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
  });
  const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
  await worker.start();
  const [source] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
  expect(source, source?.error ?? '').toMatchObject({ status: 'completed' });
  const lineage = [...(await provider.list(location, { lineageId: source!.lineageId! }))].sort(
    (a, b) => a.eventCount - b.eventCount,
  );
  const stop = lineage.findLastIndex((checkpoint) => checkpoint.trigger === 'llm_call_completed');
  for (const checkpoint of lineage.slice(stop + 1)) await provider.delete(location, checkpoint.id);
  const schema = new URL(location).searchParams.get('schema');
  await withServer((client) =>
    client.query(
      `UPDATE "${schema}".worker_runs SET status = 'cancelled', last_checkpoint = $2 WHERE id = $1`,
      [run.id, lineage[stop]!.reference],
    ),
  );
  return { queue, run };
}

describeWithPostgres('queue.fork of a run interrupted mid-task', () => {
  it('with changed inputs the interrupted task starts over with them (a warning says its call is made again)', async () => {
    const { queue, run } = await interruptedRun();
    const callsBefore = model.calls.length;
    const logs = captureLogs();
    let forked: Awaited<ReturnType<RunQueue['fork']>>;
    try {
      forked = await queue.fork(run.id, { inputs: { topic: 'kelp' } });
      expect(
        logs.expect(
          `fork("${run.id}"): task 2 "Write on {topic}" was interrupted in the run; with the changed inputs it starts over instead of continuing its saved conversation, whose prompts hold the old inputs; the 1 model call it had made is made again`,
        ),
      ).toHaveLength(1);
      expect(logs.unexpected()).toEqual([]);
    } finally {
      logs.stop({ allowUnexpected: true });
    }
    const [ended] = await queue.waitForEnd([forked.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed' });
    // Before, the saved conversation answered at once: no call, and the report was on tides.
    expect(model.calls.slice(callsBefore).map(taskOf)).toEqual(['Write on kelp']);
    expect(ended!.output).toContain('Write on kelp');
  });

  it('without changed inputs the interrupted task continues its saved conversation: no call is made again', async () => {
    const { queue, run } = await interruptedRun();
    const callsBefore = model.calls.length;
    const logs = captureLogs();
    const forked = await queue.fork(run.id).finally(() => logs.stop());
    const [ended] = await queue.waitForEnd([forked.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed' });
    expect(model.calls.slice(callsBefore)).toEqual([]);
    expect(ended!.output).toContain('Write on tides');
  });
});
