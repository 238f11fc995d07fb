import { describeWithPostgres } from '@crewline/test-support/postgres';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChildResult, ProviderKind } from './children/fencing-child.js';
import { type Child, resultOf, startChild } from './support/children.js';
import { taskDescriptions } from './support/fencing-crew.js';
import {
  headsOf,
  loggedCalls,
  paidCallsPerTask,
  runFirstTask,
  type TrialStore,
  trialStore,
} from './support/trial.js';

const resumers = 8;
const stores: TrialStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.dispose();
});

/**
 * A run stopped after its first task; 8 processes, loaded and waiting at a barrier, resume its
 * checkpoint at once. The winner's calls take 500 ms each, so the others claim while it runs (a
 * process that read the checkpoint as its run's latest and claimed after the run ended is refused
 * too, with a conflict that says the run was continued since it was read).
 */
async function eightResumers(kind: ProviderKind): Promise<void> {
  const store = trialStore(kind);
  stores.push(store);
  const before = await runFirstTask(store);
  const resumed = before.at(-1)!;
  const children: Child[] = Array.from({ length: resumers }, () =>
    startChild(
      [
        'resume',
        JSON.stringify({
          kind,
          reference: resumed.reference,
          callLog: store.callLog,
          latencyMs: taskDescriptions.map(() => 500),
          barrier: true,
        }),
      ],
      store.environment,
    ),
  );
  await Promise.all(children.map((child) => child.waitFor(/^ready$/)));
  for (const child of children) child.send('go');
  const exits = await Promise.all(children.map((child) => child.exit));
  const results = children.map((child) => resultOf<ChildResult>(child));

  const continued = children.filter((_, index) => results[index]!.status === 'finished');
  expect(continued, exits.map((exit) => exit.stderr).join('\n')).toHaveLength(1);
  const winner = continued[0]!;
  const refused = results.filter((result) => result.status === 'refused');
  expect(refused).toHaveLength(resumers - 1);
  for (const refusal of refused) {
    expect(refusal.code).toBe('conflict');
    // The holder is named: what runs, on which host, which process.
    expect(refusal.message).toContain(`crew fencing-crew on `);
    expect(refusal.message).toContain(`pid ${winner.pid}`);
    expect(refusal.details).toMatchObject({
      lineageId: resumed.lineageId,
      holder: expect.stringContaining(`pid ${winner.pid}`),
    });
  }
  expect(exits.map((exit) => exit.code).sort()).toEqual([0, ...new Array(resumers - 1).fill(3)]);

  // Every task paid for exactly once, across the first run and the 8 processes.
  const calls = loggedCalls(store);
  expect(paidCallsPerTask(calls, taskDescriptions.length)).toEqual([1, 1, 1, 1]);
  expect(new Set(calls.filter((call) => call.task > 0 && !call.failed).map((call) => call.pid))).toEqual(
    new Set([winner.pid]),
  );

  // One lineage, one branch, one head: the winner's last checkpoint.
  const after = await store.provider.list(store.location);
  expect(new Set(after.map((checkpoint) => checkpoint.lineageId))).toEqual(new Set([resumed.lineageId]));
  expect(new Set(after.map((checkpoint) => checkpoint.branch))).toEqual(new Set(['main']));
  const winnerResult = resultOf<ChildResult & { status: 'finished' }>(winner);
  expect(headsOf(after, resumed.lineageId).map((checkpoint) => checkpoint.id)).toEqual([
    winnerResult.written.at(-1),
  ]);
  expect(after).toHaveLength(before.length + winnerResult.written.length);
}

describe('8 processes resume one checkpoint: exactly one continues, 7 get the typed conflict', () => {
  it('SQLite (leases in the database)', () => eightResumers('sqlite'));
  it('JSON on one machine (lock files)', () => eightResumers('json'));
});

describeWithPostgres('8 processes resume one checkpoint on Postgres', () => {
  it('exactly one continues, 7 get the typed conflict, 0 tasks paid twice, one head', () =>
    eightResumers('postgres'));
});
