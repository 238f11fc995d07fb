import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CrewlineError, type LogRecord, setLogSink } from '@crewline/events';
import type {
  CheckpointWrite,
  Lease,
  LeaseRequest,
  LeaseToken,
  StoredCheckpoint,
} from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { offlineModel } from '../e2e/support/fixtures.js';
import { Task } from '../task/task.js';
import { defineTool } from '../tools/define-tool.js';
import { LineageLease } from './lineage-lease.js';
import { Run } from './run.js';

/** A store this process can no longer reach once `cut` is called: renewals fail or never answer. */
class PartitionedProvider extends InMemoryProvider {
  cutAt: number | undefined;
  readonly renewals: number[] = [];

  constructor(readonly failure: 'timed-out' | 'hangs' | 'throws' | 'slow' | 'never') {
    super();
  }

  #claims = 0;

  // The run's own claim reaches the store; once cut off, a claim made again fails as renewals do.
  override claimLease(location: string, request: LeaseRequest): Promise<Lease> {
    this.#claims += 1;
    if (this.#claims === 1 || this.failure === 'never' || this.failure === 'slow')
      return super.claimLease(location, request);
    if (this.failure === 'hangs') return new Promise<Lease>(() => undefined);
    if (this.failure === 'timed-out') {
      return Promise.reject(
        Object.assign(new Error('connect ETIMEDOUT 10.0.0.7:5432'), { code: 'ETIMEDOUT' }),
      );
    }
    throw new Error('socket is closed');
  }

  // Not async: a provider may throw before it returns a promise.
  override renewLease(location: string, token: LeaseToken, ttlMs: number): Promise<Lease> {
    this.renewals.push(performance.now());
    if (this.failure === 'hangs') return new Promise<Lease>(() => undefined);
    if (this.failure === 'timed-out') {
      return Promise.reject(
        Object.assign(new Error('connect ETIMEDOUT 10.0.0.7:5432'), { code: 'ETIMEDOUT' }),
      );
    }
    if (this.failure === 'throws') throw new Error('socket is closed');
    if (this.failure === 'slow') {
      // Answers after the runtime's renewal timeout (a quarter of the lease), well before the lease ends.
      return sleep(leaseTtlMs * 0.3).then(() => super.renewLease(location, token, ttlMs));
    }
    return super.renewLease(location, token, ttlMs);
  }

  override async releaseLease(location: string, token: LeaseToken): Promise<void> {
    if (this.failure === 'hangs') return new Promise<void>(() => undefined);
    return super.releaseLease(location, token);
  }
}

const taskCount = 6;
const callLatencyMs = 300;
const leaseTtlMs = 1000;

/** A crew of six one-call tasks (300 ms each: longer in all than the lease) on `provider`. */
function crewOn(provider: InMemoryProvider, paidAt: number[]): Crew {
  const llm = offlineModel({
    latencyMs: () => {
      paidAt.push(performance.now());
      return callLatencyMs;
    },
  });
  const agent = new Agent({ role: 'A', goal: 'G', backstory: 'B', llm });
  return new Crew({
    name: 'Partitioned',
    tasks: Array.from(
      { length: taskCount },
      (_, index) => new Task({ description: `step ${index}`, expectedOutput: 'y', agent }),
    ),
    checkpoint: { provider, location: 'memory-location', leaseTtlMs },
  });
}

const logs: LogRecord[] = [];
beforeEach(() => {
  logs.length = 0;
  setLogSink((record) => void logs.push(record));
});
afterEach(() => {
  setLogSink(null);
});

describe('a holder that cannot renew its lease', () => {
  it.each([
    ['fail (ETIMEDOUT)', 'timed-out'],
    ['never answer', 'hangs'],
    ['throw before returning a promise', 'throws'],
  ] as const)(
    'stops before the next model call once the lease ran out when renewals %s',
    async (_, failure) => {
      const provider = new PartitionedProvider(failure);
      const paidAt: number[] = [];
      const startedAt = performance.now();
      const outcome = await crewOn(provider, paidAt)
        .kickoff()
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      const endedAt = performance.now();

      expect(CrewlineError.hasCode(outcome, 'conflict'), String(outcome)).toBe(true);
      expect((outcome as CrewlineError).details).toMatchObject({ reason: 'lease_not_renewed' });
      expect((outcome as CrewlineError).message).toContain('could not be renewed in time');
      // The lease was claimed after `startedAt`, renewals never confirmed: whatever store another
      // process reaches grants it the head `leaseTtlMs` after the claim at the latest. No call may
      // start after that; the calls started before (at most four of 300 ms in 1000 ms) are all.
      expect(paidAt.length).toBeLessThan(taskCount);
      expect(paidAt.filter((at) => at - startedAt >= leaseTtlMs)).toEqual([]);
      expect(provider.renewals.length).toBeGreaterThan(0);
      // A store that hangs does not hang the run's end: renewal and release give up after a quarter lease.
      expect(endedAt - startedAt).toBeLessThan(leaseTtlMs * 3);
    },
  );

  it.each([
    ['confirmed', 'never'],
    ['confirmed late (a slow store, not an unreachable one)', 'slow'],
  ] as const)('runs on past the lease time while renewals are %s', async (_, failure) => {
    const provider = new PartitionedProvider(failure);
    const paidAt: number[] = [];
    const result = await crewOn(provider, paidAt).kickoff();
    expect(result.raw).toContain('[offline model]');
    expect(paidAt).toHaveLength(taskCount);
    expect(provider.renewals.length).toBeGreaterThanOrEqual(2);
  });
});

/**
 * A store that answers everything, recording the newest checkpoint written, and refuses to renew a
 * lease that ran out (as JSON's lock files do; the run must claim its head again). With
 * `checksWrites: false` it stores every write, leased or not: what stops a run then is its lease
 * alone, not a refused write.
 */
class RecordingProvider extends InMemoryProvider {
  newest: StoredCheckpoint | undefined;
  #expiresAt = 0;

  constructor(readonly options: { checksWrites: boolean } = { checksWrites: true }) {
    super();
  }

  override async claimLease(location: string, request: LeaseRequest): Promise<Lease> {
    const lease = await super.claimLease(location, request);
    this.#expiresAt = Date.parse(lease.expiresAt);
    return lease;
  }

  override async renewLease(location: string, token: LeaseToken, ttlMs: number): Promise<Lease> {
    if (Date.now() >= this.#expiresAt)
      throw new CrewlineError(
        'test-store',
        'conflict',
        `run ${token.lineageId} no longer holds its lock (it ran out)`,
      );
    const lease = await super.renewLease(location, token, ttlMs);
    this.#expiresAt = Date.parse(lease.expiresAt);
    return lease;
  }

  override writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    const { lease, ...unleased } = checkpoint;
    this.newest = super.writeSync(location, this.options.checksWrites ? checkpoint : unleased);
    return this.newest;
  }
}

/** Holds the thread for `ms`, as a synchronous tool or a suspended process does. */
function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: no timer (renewal) can run
  }
}

describe('a holder blocked or suspended past its lease', () => {
  /**
   * A crew whose second model call blocks the thread past the lease; `latencyAfterBlockMs` of that
   * call is how long it then waits for its answer (0: no timer of the lease can run before the next
   * call is asked for, only its clock can tell that the deadline passed).
   */
  function blockedCrew(
    provider: RecordingProvider,
    paidAt: number[],
    onBlocked: () => void = () => undefined,
    latencyAfterBlockMs = 20,
  ) {
    const llm = offlineModel({
      latencyMs: () => {
        paidAt.push(performance.now());
        if (paidAt.length === 2) {
          blockFor(leaseTtlMs * 1.3);
          onBlocked();
          return latencyAfterBlockMs;
        }
        return 20;
      },
    });
    const agent = new Agent({ role: 'A', goal: 'G', backstory: 'B', llm });
    return new Crew({
      name: 'Blocked',
      tasks: Array.from(
        { length: taskCount },
        (_, index) => new Task({ description: `step ${index}`, expectedOutput: 'y', agent }),
      ),
      checkpoint: { provider, location: 'memory-location', leaseTtlMs },
    });
  }

  it('claims its head again and runs on when nobody took the run over meanwhile', async () => {
    // A laptop closed mid-run, or a tool that holds the thread: renewals could not run, the lease ran
    // out in the store, but no other process continued the run. Stopping it would only make the
    // user resume it.
    const provider = new RecordingProvider();
    const paidAt: number[] = [];
    const result = await blockedCrew(provider, paidAt).kickoff();
    expect(result.raw).toContain('[offline model]');
    expect(paidAt).toHaveLength(taskCount);
    expect(logs.map((record) => record.message).join('\n')).toContain('holds the head again');
  });

  it.each([
    ['its renewal and deadline timers ran since', 20],
    ['no timer ran since, only its clock says the deadline passed', 0],
  ] as const)(
    'stops before its next call when another process was granted the run while it was blocked: %s',
    async (_, latencyAfterBlockMs) => {
      // The store stores this process's writes: a refused checkpoint write (the store's fence) would
      // stop the run whatever its lease does; here only the lease, claimed again, can.
      const provider = new RecordingProvider({ checksWrites: false });
      const paidAt: number[] = [];
      let other: Promise<Lease> | undefined;
      const outcome = await blockedCrew(
        provider,
        paidAt,
        () => {
          // Another process reaches the store first: the lease ran out there, so it is granted the head.
          const head = provider.newest!;
          other = provider.claimLease('memory-location', {
            lineageId: head.lineageId,
            owner: 'other-process',
            checkpointId: head.id,
            holder: 'crew Blocked on another host',
            ttlMs: 60_000,
          });
        },
        latencyAfterBlockMs,
      )
        .kickoff()
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      await expect(other).resolves.toMatchObject({ owner: 'other-process' });
      expect(CrewlineError.hasCode(outcome, 'conflict'), String(outcome)).toBe(true);
      expect((outcome as CrewlineError).message).toContain('crew Blocked on another host');
      // The call made while blocked was the last one this process paid for.
      expect(paidAt).toHaveLength(2);
    },
  );
});

describe('claiming the head again after a refused renewal', () => {
  /** A store whose renewals are refused (the lease ran out there) and whose later claims take `claimMs`. */
  function refusingStore(claimMs: number) {
    const log: string[] = [];
    let held: string | undefined;
    let claims = 0;
    const provider = Object.assign(new InMemoryProvider(), {
      async claimLease(_location: string, request: LeaseRequest): Promise<Lease> {
        claims += 1;
        const claim = claims;
        if (claim > 1) await sleep(claimMs);
        held = request.owner;
        log.push(`claim ${claim} granted`);
        return { lineageId: request.lineageId, owner: request.owner, holder: request.holder, expiresAt: '' };
      },
      async renewLease(): Promise<Lease> {
        throw new CrewlineError('test-store', 'conflict', 'the lease ran out');
      },
      async releaseLease(): Promise<void> {
        held = undefined;
        log.push('released');
      },
    });
    // What the lease reads of its run's state.
    const state = { lineage: { lineageId: 'run-1' }, lastStored: undefined, durable: async () => undefined };
    const claim = () =>
      LineageLease.claim({
        provider,
        location: 'memory-location',
        state: state as never,
        checkpointId: null,
        what: 'crew Test',
        ttlMs: 600,
      }).then((lease) => lease!);
    return { log, held: () => held, claim };
  }

  it('makes no call while the claim is in flight, and runs on once it is granted, even late', async () => {
    // A refusal started the claim in the background while the run went on calling models; a claim
    // granted after a quarter of the lease stopped the run and left the store holding the lease.
    const store = refusingStore(200);
    const lease = await store.claim();
    await sleep(230); // the first renewal (at 200 ms) was refused: the head is being claimed again
    const waited = performance.now();
    await lease.ensureHeld();
    expect(performance.now() - waited).toBeGreaterThan(100);
    expect(store.log).toEqual(['claim 1 granted', 'claim 2 granted']);
    await lease.release();
    expect(store.held()).toBeUndefined();
  });

  it('a release waits for a claim in flight and gives the head back after it', async () => {
    const store = refusingStore(150);
    const lease = await store.claim();
    await sleep(230);
    await lease.release();
    await sleep(300);
    expect(store.log.at(-1)).toBe('released');
    expect(store.held()).toBeUndefined();
  });
});

// A review: on its way out after a signal, the runtime gives the run's lease up while the run itself
// still goes on (the process is killed right after); a model call it started in that gap was paid
// and never stored, while another process could already continue the run.
describe('a lease given up while its run goes on', () => {
  it('lets no model or tool call start after the release', async () => {
    const provider = new InMemoryProvider();
    let release: (() => void) | undefined;
    let released: Promise<void> | undefined;
    const llm = offlineModel({
      script: (call) =>
        call.tools.length > 0 && !call.messages.some((message) => message.role === 'assistant')
          ? { toolName: 'lookup', input: { query: 'tides' } }
          : undefined,
    });
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks a subject up',
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }) => {
        // What the signal path does while the run waits for its tool: release, then (here) go on.
        released = Run.current()!.releaseLease();
        await new Promise<void>((resolve) => {
          release = resolve;
          setTimeout(resolve, 20);
        });
        return `notes about ${query}`;
      },
    });
    const agent = new Agent({ role: 'A', goal: 'G', backstory: 'B', llm, tools: [lookup] });
    const crew = new Crew({
      tasks: [
        new Task({ description: 'look tides up', expectedOutput: 'notes', agent }),
        new Task({ description: 'write about tides', expectedOutput: 'a text', agent }),
      ],
      checkpoint: { provider, location: 'memory-location' },
    });
    const outcome = await crew.kickoff().then(
      () => undefined,
      (error: unknown) => error,
    );
    await released;
    expect(release).toBeDefined();
    // The call that asked for the tool was made; nothing after the release.
    expect(llm.calls).toHaveLength(1);
    expect(CrewlineError.hasCode(outcome, 'aborted')).toBe(true);
    expect((outcome as Error).message).toContain('gave up its lineage head');
  });
});
