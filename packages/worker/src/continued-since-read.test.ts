// A run whose latest checkpoint another process continued after the worker read it (SPEC §9: exactly
// once for checkpointed completions). Nothing is wrong with the run, someone simply moved it on:
// nothing may run again and no attempt may be spent on it; the worker hands the run back and the next
// attempt continues the newest checkpoint. Before: continued between the worker's read and the
// runtime's, the checkpoint looked like an older one named on purpose and its remaining tasks were run
// again on a new branch; continued between the runtime's read and its claim, the runtime's refusal
// (`conflict`, details.continuedSinceRead) was a failed attempt, and with `maxAttempts: 2` (one spent
// by a real failure) the run ended `failed`.
import { PostgresProvider } from '@crewline/provider-postgres';
import type { Lease, LeaseRequest, ListQuery, StoredCheckpoint } from '@crewline/runtime-state';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { reportCrewFactory, uninterruptedOutput } from './test-support/report-crew.js';
import { Worker } from './worker.js';
import type { HoldChange } from './worker-options.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** When the other process continues the run: right after the worker read its latest checkpoint, or right before the runtime claims it. */
type Moment = 'after the read' | 'before the claim';

/**
 * A provider through which another process (`continueRun`) continues the run from the latest
 * checkpoint the worker read of its lineage, at `moment`: before the worker's read reaches the
 * runtime (which reads the checkpoint again, by its id), or between the runtime's read and its claim
 * of the lineage head.
 */
class ContinuedAfterRead extends PostgresProvider {
  moment: Moment = 'after the read';
  continueRun: ((latest: StoredCheckpoint) => Promise<void>) | undefined;
  #read: StoredCheckpoint | undefined;

  override async latest(location: string, query: ListQuery = {}): Promise<StoredCheckpoint | undefined> {
    const latest = await super.latest(location, query);
    if (latest !== undefined && query.lineageId !== undefined) {
      this.#read = latest;
      if (this.moment === 'after the read') await this.#continue();
    }
    return latest;
  }

  override async claimLease(location: string, request: LeaseRequest): Promise<Lease> {
    if (this.moment === 'before the claim' && request.checkpointId === this.#read?.id) await this.#continue();
    return super.claimLease(location, request);
  }

  async #continue(): Promise<void> {
    const continueRun = this.continueRun;
    this.continueRun = undefined;
    if (continueRun !== undefined && this.#read !== undefined) await continueRun(this.#read);
  }
}

/**
 * A provider whose `latest()` of a lineage answers, for good, the checkpoint before its head (a
 * caching wrapper, a read replica that lags, a subclass that reads elsewhere): every claim of what it
 * answers finds the lineage moved on, though nobody continued the run.
 */
class LatestOneBehind extends PostgresProvider {
  override async latest(location: string, query: ListQuery = {}): Promise<StoredCheckpoint | undefined> {
    if (query.lineageId === undefined) return super.latest(location, query);
    const checkpoints = await super.list(location, query);
    return checkpoints.length > 1 ? checkpoints[checkpoints.length - 2] : checkpoints[0];
  }
}

describeWithPostgres('a run continued by another process after its worker read its latest checkpoint', () => {
  // Before: 'after the read' ran tasks 3 and 4 again on a new branch (released: retry, completed);
  // 'before the claim' was a failed attempt, the second of two, and the run ended failed.
  it.each<Moment>(['after the read', 'before the claim'])(
    '%s: is handed back, not failed nor run again: no attempt spent, the next attempt continues the newest checkpoint',
    async (moment) => {
      const location = temporaryLocation();
      const schema = new URL(location).searchParams.get('schema')!;
      const queue = new RunQueue({ location, create: true });
      const provider = new ContinuedAfterRead({ schema });
      provider.moment = moment;
      let failing = true;
      const calls: { runId: string; task: number }[] = [];
      // The second task fails while `failing`: the first attempt ends there, after a checkpoint.
      const factory = reportCrewFactory({
        failWhen: (task) => failing && task === 1,
        onCall: (runId, task) => calls.push({ runId, task }),
      });
      const holds: HoldChange[] = [];
      const worker = new Worker({
        location,
        provider,
        runs: { crews: { report: factory } },
        leaseTtlMs: 1500,
        pollIntervalMs: 100,
        retryDelayMs: 100,
        onHold: (change) => holds.push(change),
      });
      cleanups.push(async () => {
        await worker.stop({ handBack: false });
        await queue.close();
        await provider.close();
        await dropLocation(location);
        await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
      });
      const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' }, maxAttempts: 2 });
      // The retry's read of the latest checkpoint: another process continues the run from it to its end.
      provider.continueRun = async (latest) => {
        failing = false;
        const other = factory({ runId: run.id, inputs: { topic: 'tides' }, attempt: 0 });
        await other.kickoff({ fromCheckpoint: { restoreFrom: latest.reference, provider } });
      };
      await worker.start();

      const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 60_000 });

      expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', failures: 1 });
      expect(ended!.output).toBe(await uninterruptedOutput('tides'));
      // The refused attempt was handed back, not counted as a failure.
      const released = holds.filter((change) => change.change === 'released').map((change) => change.outcome);
      expect(released).toEqual(['retry', 'handed-back', 'completed']);
      // Each task was asked once but the failed one (twice: the failure, then the other process);
      // the worker's last attempt asked nothing: the other process had finished the run.
      const runCalls = calls.filter((call) => call.runId === run.id).map((call) => call.task);
      expect(runCalls).toEqual([0, 1, 1, 2, 3]);
    },
  );

  // Before: the refusal was handed back at once, free, for ever (230 hand-backs in 3 s, the run stuck
  // `running`); the hand-back is free only when the lineage's latest, read again, moved past the read.
  it('a provider whose latest() lags its claims for good: each refused attempt is a failed one, with back-off, until the run fails; never handed back', async () => {
    const location = temporaryLocation();
    const schema = new URL(location).searchParams.get('schema')!;
    const queue = new RunQueue({ location, create: true });
    const provider = new LatestOneBehind({ schema });
    const calls: { runId: string; task: number }[] = [];
    // The first attempt ends in the second task, after a checkpoint: the next ones read `latest()`.
    const factory = reportCrewFactory({
      failWhen: (task) => task === 1,
      onCall: (runId, task) => calls.push({ runId, task }),
    });
    const holds: HoldChange[] = [];
    const worker = new Worker({
      location,
      provider,
      runs: { crews: { report: factory } },
      leaseTtlMs: 1500,
      pollIntervalMs: 100,
      retryDelayMs: 100,
      onHold: (change) => holds.push(change),
    });
    cleanups.push(async () => {
      await worker.stop({ handBack: false });
      await queue.close();
      await provider.close();
      await dropLocation(location);
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' }, maxAttempts: 3 });
    await worker.start();

    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 8_000 });

    expect(ended).toMatchObject({ status: 'failed', failures: 3 });
    expect(ended!.error).toContain('failed 3 of 3 attempts');
    expect(ended!.error).toContain('latest()');
    const released = holds.filter((change) => change.change === 'released').map((change) => change.outcome);
    expect(released).toEqual(['retry', 'retry', 'failed']);
    // The refused attempts asked nothing: only the first attempt's calls were made.
    expect(calls.filter((call) => call.runId === run.id).map((call) => call.task)).toEqual([0, 1]);
  }, 30_000);
});
