import { CrewlineError } from '@crewline/events';
import { PostgresProvider } from '@crewline/provider-postgres';
import { Agent, Crew, registerProject, Task } from '@crewline/runtime';
import { type OfflineModelCall, offlineModel } from '@crewline/runtime/testing';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { Worker } from './worker.js';

const descriptions = ['Research {topic}', 'Outline {topic}', 'Write on {topic}', 'Review {topic}'];

// One model registered by a fixed id: the fork rebuilds the crew from the checkpoint, which names it.
const model = offlineModel({ name: 'fork-run' });
registerProject({ models: { 'fork-run:model': model } });

function crewOf(): Crew {
  const writer = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Plain', llm: model });
  return new Crew({
    name: 'fork-run-crew',
    agents: [writer],
    tasks: descriptions.map(
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

/** A queue, a provider and a worker (not started) on a fresh location, removed after the test. */
function setUp() {
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
  return { location, queue, provider, worker };
}

describeWithPostgres('queue.fork', () => {
  it('queues a finished run again from its last checkpoint with edited inputs and task outputs: later tasks re-run, earlier ones are not paid again', async () => {
    const { location, queue, provider, worker } = setUp();
    const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
    // A run that has not finished is not forked.
    await expect(queue.fork(run.id)).rejects.toSatisfy(
      (error) =>
        CrewlineError.hasCode(error, 'invalid_state') && /is queued; only a finished run/.test(error.message),
    );
    // A run cancelled before it wrote a checkpoint has nothing to branch off.
    const { run: cancelled } = await queue.enqueue('report', { inputs: { topic: 'never' } });
    await queue.cancel(cancelled.id);
    await expect(queue.fork(cancelled.id)).rejects.toSatisfy(
      (error) =>
        CrewlineError.hasCode(error, 'invalid_state') &&
        /ended \(cancelled\) without writing a checkpoint/.test(error.message),
    );
    await worker.start();
    const [source] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(source, source?.error ?? '').toMatchObject({ status: 'completed' });
    const sourceCheckpoints = await provider.list(location, { lineageId: source!.lineageId! });
    const forkPoint = (await provider.latest(location, { lineageId: source!.lineageId! }))!;
    const callsBefore = model.calls.length;

    // Checked against the run's last checkpoint before anything is queued, numbered from 1 as the
    // CLI numbers tasks: nothing reaches a worker to fail there later.
    const refusals: [Parameters<RunQueue['fork']>[1], RegExp][] = [
      [
        { taskOutputs: { 6: 'x' } },
        /task 7 is out of range: the run's last checkpoint holds 4 task\(s\), numbered 1 to 4$/,
      ],
      // The input it is probably a misspelling of is named, as the CLI's resume and fork name it.
      [
        { inputs: { topik: 'kelp' } },
        /input "topik" is not one the run knows \(known: topic\); check its spelling \(did you mean "topic"\?\)/,
      ],
      [{ rerunFrom: 'outline' }, /rerunFrom is for runs of a flow/],
      // Changed inputs reach only tasks that have not run: forking the completed run with them alone,
      // or editing only its last task, would run nothing and end with the old report.
      [
        { inputs: { topic: 'reefs' } },
        /nothing to run: every task of crew "fork-run-crew" is completed and no edit makes one run again/,
      ],
      [{ inputs: { topic: 'reefs' }, taskOutputs: { 3: 'x' } }, /nothing to run/],
    ];
    for (const [options, message] of refusals) {
      await expect(queue.fork(run.id, options)).rejects.toSatisfy(
        (error) => CrewlineError.hasCode(error, 'invalid_argument') && message.test(error.message),
      );
    }
    // What the refusal of an unknown input is about, for a caller that words it its own way (the
    // CLI names its --input flag instead of this message's `fork("<run id>")`).
    await expect(queue.fork(run.id, { inputs: { topik: 'kelp' } })).rejects.toSatisfy(
      (error) =>
        CrewlineError.hasCode(error, 'invalid_argument') &&
        error.details?.unknownInput === 'topik' &&
        error.details?.nearest === 'topic' &&
        JSON.stringify(error.details?.known) === '["topic"]',
    );
    expect(await queue.list()).toHaveLength(2);

    const forked = await queue.fork(run.id, {
      inputs: { topic: 'kelp' },
      taskOutputs: { 1: 'EDITED OUTLINE: three parts' },
      idempotencyKey: 'fork-1',
    });
    expect(forked).toMatchObject({
      name: 'report',
      status: 'queued',
      inputs: { topic: 'kelp' },
      forkOf: run.id,
      forkFrom: source!.lastCheckpoint,
    });
    expect(await queue.fork(run.id, { idempotencyKey: 'fork-1' })).toMatchObject({ id: forked.id });
    const [ended] = await queue.waitForEnd([forked.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', attempts: 1 });

    // Only the tasks after the edited one were asked, with the new inputs and the edited context.
    const forkCalls = model.calls.slice(callsBefore);
    expect(forkCalls.map(taskOf)).toEqual(['Write on kelp', 'Review kelp']);
    expect(JSON.stringify(forkCalls[0]!.prompt)).toContain('EDITED OUTLINE: three parts');
    expect(ended!.output).not.toBe(source!.output);

    // The fork's progress counts its own 2 calls; its checkpoints also carry the source run's 4,
    // which are the source run's (before: 6 calls here, so summing runs counted them twice).
    const sourceProgress = await queue.progress(run.id);
    const forkProgress = await queue.progress(forked.id);
    expect(forkProgress.modelCalls).toBe(2);
    expect(sourceProgress).toMatchObject({ modelCalls: 4, beforeFork: null });
    expect(forkProgress.cost.models.map((entry) => entry.calls)).toEqual([2]);
    expect(forkProgress.beforeFork).toMatchObject({ runId: run.id, modelCalls: 4 });
    expect(forkProgress.tokens.total + forkProgress.beforeFork!.tokens.total).toBeGreaterThan(
      forkProgress.tokens.total,
    );
    expect(forkProgress.beforeFork!.tokens).toEqual(sourceProgress.tokens);

    // A lineage of its own whose first checkpoint's parent is the finished run's last checkpoint; the
    // finished run's lineage gained nothing.
    expect(ended!.lineageId).not.toBe(source!.lineageId);
    const forkCheckpoints = await provider.list(location, { lineageId: ended!.lineageId! });
    const first = [...forkCheckpoints].sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0]!;
    expect(first.parentId).toBe(forkPoint.id);
    expect(source!.lastCheckpoint).toContain(`#${forkPoint.id}`);
    expect(await provider.list(location, { lineageId: source!.lineageId! })).toHaveLength(
      sourceCheckpoints.length,
    );
  });

  it('branches a cancelled run off its newest checkpoint, not the one its row last recorded', async () => {
    // A run cancelled mid-task: its row's last checkpoint is whatever the last renewal wrote, often
    // the run's first; the fork branched off it and paid again for the tasks completed after it.
    const { location, queue, provider, worker } = setUp();
    const { run } = await queue.enqueue('report', { inputs: { topic: 'moss' } });
    await worker.start();
    const [source] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    const checkpoints = await provider.list(location, { lineageId: source!.lineageId! });
    const newest = (await provider.latest(location, { lineageId: source!.lineageId! }))!;
    const early = [...checkpoints].sort((a, b) => a.eventCount - b.eventCount)[1]!;
    const schema = new URL(location).searchParams.get('schema');
    await withServer((client) =>
      client.query(
        `UPDATE "${schema}".worker_runs SET status = 'cancelled', last_checkpoint = $2 WHERE id = $1`,
        [run.id, early.reference],
      ),
    );

    const forked = await queue.fork(run.id, { taskOutputs: { 1: 'EDITED OUTLINE' } });
    expect(forked.forkFrom).toBe(newest.reference);
  });
});
