import { CrewlineError } from '@crewline/events';
import { Flow, listen, start } from '@crewline/runtime';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { Worker } from './worker.js';

/** Which methods ran, in order, over every run; `publishFails` makes `publish` throw. */
const ran: string[] = [];
let publishFails = true;

class ForkedNotesFlow extends Flow<{ topic: string; note: string }> {
  initialState = { topic: '', note: '' };

  @start()
  gather() {
    ran.push('gather');
    return `facts on ${this.state.topic}`;
  }

  @listen('gather')
  shape(facts: string) {
    ran.push('shape');
    this.state.note = `a note on ${this.state.topic} from ${facts}`;
    return this.state.note;
  }

  @listen('shape')
  publish(note: string) {
    ran.push('publish');
    if (publishFails) throw new Error('the press is down');
    return `published: ${note}`;
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describeWithPostgres('queue.fork of a flow run', () => {
  it('forks a failed flow run from its last checkpoint, and re-runs a flow from a method with changed inputs (earlier methods restored, not run again)', async () => {
    const location = temporaryLocation();
    const queue = new RunQueue({ location, create: true });
    const worker = new Worker({ location, runs: { flows: { notes: ForkedNotesFlow } }, pollIntervalMs: 100 });
    cleanups.push(async () => {
      await worker.stop({ handBack: false });
      await queue.close();
      await dropLocation(location);
      const schema = new URL(location).searchParams.get('schema');
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const { run } = await queue.enqueue('notes', { inputs: { topic: 'kelp' }, maxAttempts: 1 });
    await worker.start();
    const [failed] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(failed).toMatchObject({ status: 'failed', error: expect.stringContaining('the press is down') });
    expect(ran).toEqual(['gather', 'shape', 'publish']);

    // Refused before anything is queued: edits a flow run cannot take, a method it never completed.
    const refusals: [Parameters<RunQueue['fork']>[1], RegExp][] = [
      [{ taskOutputs: { 0: 'x' } }, /taskOutputs \(--set-output\) are for runs of a crew/],
      [
        { rerunFrom: 'print' },
        /rerunFrom "print" is not a method the run completed \(completed: gather, shape\)/,
      ],
      [{ inputs: { topik: 'reefs' } }, /input "topik" is not one the run knows \(known: id, note, topic\)/],
    ];
    for (const [options, message] of refusals) {
      await expect(queue.fork(run.id, options)).rejects.toSatisfy(
        (error) => CrewlineError.hasCode(error, 'invalid_argument') && message.test(error.message),
      );
    }
    expect(await queue.list()).toHaveLength(1);

    // A failed run's last checkpoint is a fork point: with the press back, only `publish` runs.
    publishFails = false;
    const retried = await queue.fork(run.id);
    expect(retried).toMatchObject({ status: 'queued', forkOf: run.id, forkFrom: failed!.lastCheckpoint });
    const [retriedEnd] = await queue.waitForEnd([retried.id], { timeoutMs: 30_000 });
    expect(retriedEnd, retriedEnd?.error ?? '').toMatchObject({ status: 'completed' });
    expect(retriedEnd!.output).toBe('published: a note on kelp from facts on kelp');
    expect(ran.slice(3)).toEqual(['publish']);

    // Re-run from `shape` with another topic: `gather` is restored (its output kept), the rest runs.
    const rerun = await queue.fork(run.id, { rerunFrom: 'shape', inputs: { topic: 'reefs' } });
    expect(rerun.forkFrom).not.toBe(failed!.lastCheckpoint);
    const [rerunEnd] = await queue.waitForEnd([rerun.id], { timeoutMs: 30_000 });
    expect(rerunEnd, rerunEnd?.error ?? '').toMatchObject({ status: 'completed' });
    expect(rerunEnd!.output).toBe('published: a note on reefs from facts on kelp');
    expect(ran.slice(4)).toEqual(['shape', 'publish']);
    expect(rerunEnd!.lineageId).not.toBe(failed!.lineageId);

    // The completed fork forked again without rerunFrom would run no method: refused, not queued.
    await expect(queue.fork(retried.id, { inputs: { topic: 'reefs' } })).rejects.toSatisfy(
      (error) =>
        CrewlineError.hasCode(error, 'invalid_argument') &&
        /nothing to run: flow "\S+" is completed and no method would run again; re-run its methods from one of them with rerunFrom/.test(
          error.message,
        ),
    );

    // The fork of the failed run began after `shape`: none of its own checkpoints precedes it.
    await expect(queue.fork(retried.id, { rerunFrom: 'shape' })).rejects.toSatisfy(
      (error) =>
        CrewlineError.hasCode(error, 'invalid_argument') &&
        /"shape" had completed before the run's first checkpoint/.test(error.message),
    );

    // A fork made with an idempotency key, asked again after the forked run changed so that the
    // fork would now be refused: the key is looked up first, so the same run comes back.
    const keyed = await queue.fork(run.id, { rerunFrom: 'shape', idempotencyKey: 'rerun-shape' });
    await queue.waitForEnd([keyed.id], { timeoutMs: 30_000 });

    // A run whose lineage its worker could not record: its earlier checkpoints are not known.
    const schema = new URL(location).searchParams.get('schema');
    await withServer((client) =>
      client.query(`UPDATE "${schema}".worker_runs SET lineage_id = NULL WHERE id = $1`, [run.id]),
    );
    await expect(queue.fork(run.id, { rerunFrom: 'shape' })).rejects.toSatisfy(
      (error) =>
        CrewlineError.hasCode(error, 'invalid_argument') &&
        /run has no recorded lineage/.test(error.message) &&
        !/is itself a fork/.test(error.message),
    );
    expect((await queue.fork(run.id, { rerunFrom: 'shape', idempotencyKey: 'rerun-shape' })).id).toBe(
      keyed.id,
    );
  });
});
