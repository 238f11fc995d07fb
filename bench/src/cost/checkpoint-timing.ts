// What a run pays for each of its checkpoints, however the provider stores them. A checkpoint is
// taken inside its event (`writeCheckpointSync`, or `writeCheckpoint` when the provider writes in
// groups, as SqliteProvider and JsonProvider do by default), and stored then or later, alone or in
// a group (`writeSync`, `write`, `writeBatch`). Each checkpoint is charged the time its run spent
// taking it (snapshot, redaction, building the write, queueing it) plus its share of the provider
// call that stored it: a group's time split evenly among its checkpoints. Summed over a run, that is
// every millisecond the run spent on checkpoints, no more, no less.
import { type CheckpointProvider, type CheckpointWrite, RuntimeState } from '@crewline/runtime-state';

/** Per checkpoint, in the order the run took them (which is the order they are stored in). */
export interface CheckpointTimes {
  /** Taking it plus its share of the provider call that stored it, in ms. */
  endToEndMs: number[];
  /** Its share of the provider call that stored it, in ms. */
  providerMs: number[];
  /** Checkpoints per provider call, one entry per call. */
  groupSizes: number[];
}

/** A timing in progress; {@link CheckpointTiming.stop} puts the originals back. */
export interface CheckpointTiming {
  /** What was timed so far (checkpoints stored so far; one still queued is not counted yet). */
  times(): CheckpointTimes;
  stop(): void;
}

type WriteMethods = Pick<CheckpointProvider, 'writeSync' | 'write' | 'writeBatch'>;

export interface CheckpointTimingOptions {
  /**
   * Charge an async `write` or `writeBatch` its whole time, not only its synchronous part: for a
   * provider whose writes are mostly waits on another machine (PostgresProvider's round trips and
   * commits), which the run pays at its barrier before the next model or tool call, since that
   * barrier waits for every write queued before it. Default `false` (the synchronous part only).
   */
  awaited?: boolean;
}

/**
 * Times every checkpoint of every run in this process that `provider` stores (a provider instance,
 * or a provider class's prototype to time every instance), until `stop()`. `stored` is called with
 * each checkpoint once the provider has stored it, outside the timed work (a benchmark feeds its
 * peers from there).
 */
export function timeCheckpoints(
  provider: WriteMethods,
  stored?: (write: CheckpointWrite) => void,
  options: CheckpointTimingOptions = {},
): CheckpointTiming {
  const state = RuntimeState.prototype;
  const originals = {
    writeCheckpointSync: state.writeCheckpointSync,
    writeCheckpoint: state.writeCheckpoint,
    writeSync: Object.hasOwn(provider, 'writeSync') ? provider.writeSync : undefined,
    write: Object.hasOwn(provider, 'write') ? provider.write : undefined,
    writeBatch: Object.hasOwn(provider, 'writeBatch') ? provider.writeBatch : undefined,
  };
  const inner = {
    writeSync: provider.writeSync,
    write: provider.write,
    writeBatch: provider.writeBatch,
  };
  const captureMs: number[] = [];
  const providerMs: number[] = [];
  const groupSizes: number[] = [];
  // Provider time spent inside the writeCheckpointSync call under way (not part of taking it).
  let providerInsideSync = 0;
  let syncDepth = 0;
  const charge = (elapsed: number, writes: readonly CheckpointWrite[]) => {
    if (syncDepth > 0) providerInsideSync += elapsed;
    groupSizes.push(writes.length);
    for (const write of writes) {
      providerMs.push(elapsed / writes.length);
      stored?.(write);
    }
  };

  state.writeCheckpointSync = function timed(this: RuntimeState, ...parameters) {
    const started = performance.now();
    const outside = providerInsideSync;
    syncDepth += 1;
    try {
      return originals.writeCheckpointSync.apply(this, parameters);
    } finally {
      syncDepth -= 1;
      const inProvider = providerInsideSync - outside;
      if (syncDepth === 0) providerInsideSync = 0;
      captureMs.push(performance.now() - started - inProvider);
    }
  };
  state.writeCheckpoint = function timed(this: RuntimeState, ...parameters) {
    const started = performance.now();
    try {
      return originals.writeCheckpoint.apply(this, parameters);
    } finally {
      // The part the run pays inside its event; the write itself is charged where it happens.
      captureMs.push(performance.now() - started);
    }
  };
  if (inner.writeSync)
    provider.writeSync = function timed(this: CheckpointProvider, location, write) {
      const started = performance.now();
      const result = inner.writeSync!.call(this, location, write);
      charge(performance.now() - started, [write]);
      return result;
    };
  provider.write = async function timed(this: CheckpointProvider, location, write) {
    // Only the synchronous part is the run's (unless `awaited`): a provider that awaits I/O leaves
    // the thread free.
    const started = performance.now();
    const pending = inner.write.call(this, location, write);
    const synchronous = performance.now() - started;
    const result = await pending;
    charge(options.awaited ? performance.now() - started : synchronous, [write]);
    return result;
  };
  if (inner.writeBatch)
    provider.writeBatch = async function timed(this: CheckpointProvider, location, writes) {
      const started = performance.now();
      const pending = inner.writeBatch!.call(this, location, writes);
      const synchronous = performance.now() - started;
      const result = await pending;
      charge(options.awaited ? performance.now() - started : synchronous, writes);
      return result;
    };

  return {
    times() {
      return {
        endToEndMs: providerMs.map((share, index) => (captureMs[index] ?? 0) + share),
        providerMs: [...providerMs],
        groupSizes: [...groupSizes],
      };
    },
    stop() {
      state.writeCheckpointSync = originals.writeCheckpointSync;
      state.writeCheckpoint = originals.writeCheckpoint;
      for (const name of ['writeSync', 'write', 'writeBatch'] as const) {
        if (originals[name] === undefined) delete (provider as Partial<WriteMethods>)[name];
        else (provider as Record<string, unknown>)[name] = originals[name];
      }
    },
  };
}
