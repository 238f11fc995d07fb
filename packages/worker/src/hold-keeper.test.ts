import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { setLogSink } from '@crewline/events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AttemptEnds } from './attempt-end.js';
import { type HeldRun, HoldKeeper } from './hold-keeper.js';
import type { QueueStore } from './queue-store.js';
import { AttemptTracker } from './run-attempt.js';

const leaseTtlMs = 1_000;

/** A queue store whose server this worker cannot reach: every query fails as a partition does. */
function unreachableStore(): QueueStore & { queries: number } {
  const store = {
    queries: 0,
    table: 'crewline_runs',
    pool: {
      query: async () => {
        store.queries += 1;
        throw Object.assign(new Error('connect ETIMEDOUT 10.0.0.7:5432'), { code: 'ETIMEDOUT' });
      },
    },
  };
  return store as unknown as QueueStore & { queries: number };
}

// Block bodies: `setLogSink` returns the sink it replaced, which vitest would call as a teardown.
beforeEach(() => {
  setLogSink(() => undefined);
});
afterEach(() => {
  setLogSink(null);
});

describe('HoldKeeper on a server it cannot reach', () => {
  it('stops a run as lost once its hold could have run out, not before', async () => {
    const store = unreachableStore();
    const tracker = new AttemptTracker();
    const held: HeldRun = {
      runId: 'run-1',
      token: 'token-1',
      tracker,
      confirmedAt: performance.now(),
      renewedTokens: { input: 0, output: 0 },
      confirmedTokens: { input: 0, output: 0 },
    };
    const keeper = new HoldKeeper(store, {} as AttemptEnds, leaseTtlMs, new Map([[held.runId, held]]));

    await keeper.renewAll();
    expect(store.queries).toBe(1);
    expect(tracker.controller.signal.aborted).toBe(false);

    // The server holds the run until `leaseTtlMs` after the claim at the earliest; the worker gives
    // it up a safety margin before, whether or not it tries to renew again meanwhile.
    await sleep(leaseTtlMs);
    expect(tracker.controller.signal.aborted).toBe(true);
    expect(tracker.controller.signal.reason).toMatchObject({ stop: 'lost' });
  });

  it('stops a run whose renewal never answers (a pool of hung connections) once its hold could have run out', async () => {
    const store = {
      table: 'crewline_runs',
      pool: { query: () => new Promise(() => undefined) },
    } as unknown as QueueStore;
    const tracker = new AttemptTracker();
    const held: HeldRun = {
      runId: 'run-1',
      token: 'token-1',
      tracker,
      confirmedAt: performance.now(),
      renewedTokens: { input: 0, output: 0 },
      confirmedTokens: { input: 0, output: 0 },
    };
    const keeper = new HoldKeeper(store, {} as AttemptEnds, leaseTtlMs, new Map([[held.runId, held]]));

    void keeper.renewAll();
    await sleep(leaseTtlMs);
    expect(tracker.controller.signal.reason).toMatchObject({ stop: 'lost' });
  });

  it('keeps a run whose renewal fails once but is confirmed again in time', async () => {
    let failing = true;
    const store = {
      table: 'crewline_runs',
      pool: {
        query: async () => {
          if (failing) throw Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' });
          return { rows: [{ status: 'running' }] };
        },
      },
    } as unknown as QueueStore;
    const tracker = new AttemptTracker();
    const held: HeldRun = {
      runId: 'run-1',
      token: 'token-1',
      tracker,
      confirmedAt: performance.now(),
      renewedTokens: { input: 0, output: 0 },
      confirmedTokens: { input: 0, output: 0 },
    };
    const keeper = new HoldKeeper(store, {} as AttemptEnds, leaseTtlMs, new Map([[held.runId, held]]));

    await keeper.renewAll();
    failing = false;
    await keeper.renewAll();
    await sleep(leaseTtlMs);
    expect(tracker.controller.signal.aborted).toBe(false);
  });

  it('keeps a run whose worker was blocked past its hold when the hold is still its own', async () => {
    // A synchronous tool held the thread past the deadline: the renewal sent when it let go was
    // raced by the deadline's timer, which stopped the run as lost though no reaper had given it away.
    const store = {
      table: 'crewline_runs',
      pool: { query: () => sleep(50).then(() => ({ rows: [{ status: 'running' }] })) },
    } as unknown as QueueStore;
    const tracker = new AttemptTracker();
    const blockedSince = performance.now() - 2 * leaseTtlMs;
    const held: HeldRun = {
      runId: 'run-1',
      token: 'token-1',
      tracker,
      confirmedAt: blockedSince,
      renewedTokens: { input: 0, output: 0 },
      confirmedTokens: { input: 0, output: 0 },
    };
    const keeper = new HoldKeeper(store, {} as AttemptEnds, leaseTtlMs, new Map([[held.runId, held]]));

    await keeper.renewAll();
    await sleep(300);
    expect(tracker.controller.signal.aborted).toBe(false);
    expect(held.confirmedAt).toBeGreaterThan(blockedSince);
  });
});
