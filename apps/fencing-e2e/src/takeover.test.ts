import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { registerProject } from '@crewline/runtime';
import { describeWithPostgres } from '@crewline/test-support/postgres';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChildResult, ProviderKind } from './children/fencing-child.js';
import { resultOf, startChild } from './support/children.js';
import { fencingCrew, fencingModel, inputs, MODEL_ID, taskDescriptions } from './support/fencing-crew.js';
import {
  headsOf,
  loggedCalls,
  paidCallsPerTask,
  runFirstTask,
  type TrialStore,
  trialStore,
} from './support/trial.js';

const leaseTtlMs = 1500;
/** The task the holder is killed in the middle of (its model call takes 30 s). */
const killedInTask = 2;

const stores: TrialStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.dispose();
});

let uninterruptedOutput: string;
beforeAll(async () => {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-fencing-reference-'));
  try {
    const model = fencingModel({ callLog: join(directory, 'calls.log') });
    registerProject({ models: { [MODEL_ID]: model } });
    uninterruptedOutput = (await fencingCrew(model, false).kickoff({ inputs })).raw;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});

function resumer(store: TrialStore, reference: string, latencyMs: number[] = []) {
  return startChild(
    [
      'resume',
      JSON.stringify({ kind: store.kind, reference, callLog: store.callLog, latencyMs, leaseTtlMs }),
    ],
    store.environment,
  );
}

/**
 * A holder continuing a run (lease 1.5 s) is killed with SIGKILL in the middle of a model call. A
 * second process that tries at once takes the run over from the latest checkpoint and ends it with
 * the output of an uninterrupted run: at once with SQLite and JSON (one machine: the holder's process
 * is seen gone), and with Postgres (many machines) once it was refused, naming the dead holder, and
 * the lease has run out.
 */
async function killedHolderIsTakenOver(kind: ProviderKind): Promise<void> {
  const store = trialStore(kind);
  stores.push(store);
  const before = await runFirstTask(store);
  const holder = resumer(
    store,
    before.at(-1)!.reference,
    taskDescriptions.map((_, task) => (task === killedInTask ? 30_000 : 0)),
  );
  await holder.waitFor(new RegExp(`^call ${killedInTask}$`));
  // Let the checkpoints of the finished task land (Postgres writes them in the background).
  await sleep(300);
  holder.process.kill('SIGKILL');
  expect((await holder.exit).signal).toBe('SIGKILL');

  let taker = resumer(store, store.location);
  await taker.exit;
  let taken = resultOf<ChildResult>(taker);
  if (kind === 'postgres') {
    expect(taken).toMatchObject({
      status: 'refused',
      code: 'conflict',
      message: expect.stringContaining(`pid ${holder.pid}`),
      details: { holder: expect.stringContaining(`pid ${holder.pid}`) },
    });
    const left = Number((taken as ChildResult & { status: 'refused' }).details?.expiresInMs);
    expect(left).toBeLessThanOrEqual(leaseTtlMs);
    await sleep(left + 100);
    taker = resumer(store, store.location);
    await taker.exit;
    taken = resultOf<ChildResult>(taker);
  }
  expect(taken, taker.stderr()).toMatchObject({ status: 'finished', output: uninterruptedOutput });

  // Paid once each, but the call the holder died in: it was never answered, so never checkpointed.
  const calls = loggedCalls(store);
  expect(paidCallsPerTask(calls, taskDescriptions.length)).toEqual([1, 1, 2, 1]);
  expect(calls.filter((call) => call.pid === holder.pid).map((call) => call.task)).toEqual([1, killedInTask]);
  expect(calls.filter((call) => call.pid === taker.pid).map((call) => call.task)).toEqual([killedInTask, 3]);

  const after = await store.provider.list(store.location);
  const lineageId = before[0]!.lineageId;
  expect(new Set(after.map((checkpoint) => `${checkpoint.lineageId} ${checkpoint.branch}`))).toEqual(
    new Set([`${lineageId} main`]),
  );
  expect(headsOf(after, lineageId)).toHaveLength(1);
}

describe('a holder killed with SIGKILL is taken over at once on its own machine (its process is seen gone)', () => {
  it('SQLite', () => killedHolderIsTakenOver('sqlite'));
  it('JSON', () => killedHolderIsTakenOver('json'));
});

describeWithPostgres('a holder killed with SIGKILL is taken over on Postgres', () => {
  it('after its lease runs out, with the output of an uninterrupted run and no checkpointed call repeated', () =>
    killedHolderIsTakenOver('postgres'));
});
