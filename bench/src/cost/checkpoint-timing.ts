// What a run pays for each of its checkpoints, however the provider stores them. A checkpoint is
// taken inside its event (`writeCheckpointSync`, or `writeCheckpoint` when the provider writes in
// the background, as JsonProvider does and SqliteProvider with `groupCommit`), and stored then or
// later, alone or in a group (`writeSync`, `write`, `writeBatch`). Each checkpoint is charged the time its run spent
// taking it (snapshot, redaction, building the write, queueing it) plus its share of the provider
// call that stored it: a group's time split evenly among its checkpoints. Summed over a run, that is
// every millisecond the run spent on checkpoints, no more, no less.
import { type CheckpointProvider, type CheckpointWrite, RuntimeState } from '@crewline/runtime-state';

/** Per checkpoint stored, in the order they were stored (the order the run took them). */
export interface CheckpointTimes {
  /** Their ids. */
  ids: string[];
  /** Taking it plus its share of the provider calls that stored it, in ms. */
  endToEndMs: number[];
  /** Its share of the provider calls that stored it (a failed attempt included), in ms. */
  providerMs: number[];
  /** Checkpoints per provider call that stored them, one entry per call. */
  groupSizes: number[];
  /** Each such call's whole time, in ms: what a run waits for at a barrier. */
  commitMs: number[];
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
 * or a provider class's prototype to time every instance), until `stop()`. Times are matched by
 * checkpoint id: a checkpoint that fails is charged nothing, a provider call that fails is charged
 * to the checkpoints it held, one written twice (a strict checkpoint, or at exit) is charged both
 * writes. `stored` is called with each checkpoint once the provider has stored it, outside the timed
 * work (a benchmark feeds its peers from there).
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
  /** Time taken in the event, by checkpoint id. */
  const captureMs = new Map<string, number>();
  /** Provider time, by checkpoint id. */
  const shareMs = new Map<string, number>();
  /** Ids in the order they were first stored. */
  const storedIds: string[] = [];
  const storedSet = new Set<string>();
  const groupSizes: number[] = [];
  const commitMs: number[] = [];
  // Provider time spent inside the writeCheckpointSync call under way (not part of taking it).
  let providerInsideSync = 0;
  let syncDepth = 0;
  const add = (map: Map<string, number>, id: string, ms: number) => map.set(id, (map.get(id) ?? 0) + ms);
  const charge = (elapsed: number, writes: readonly CheckpointWrite[], succeeded: boolean) => {
    if (syncDepth > 0) providerInsideSync += elapsed;
    for (const write of writes) add(shareMs, write.metadata.id, elapsed / writes.length);
    if (!succeeded) return;
    groupSizes.push(writes.length);
    commitMs.push(elapsed);
    for (const write of writes) {
      if (storedSet.has(write.metadata.id)) continue;
      storedSet.add(write.metadata.id);
      storedIds.push(write.metadata.id);
      stored?.(write);
    }
  };
  /**
   * Times a provider call, counting only its synchronous part as the run's (I/O it awaits leaves the
   * thread free), unless `awaited`.
   */
  const timed = <T>(writes: readonly CheckpointWrite[], call: () => T | Promise<T>): T | Promise<T> => {
    const started = performance.now();
    let result: T | Promise<T>;
    try {
      result = call();
    } catch (error) {
      charge(performance.now() - started, writes, false);
      throw error;
    }
    const synchronous = performance.now() - started;
    if (!(result instanceof Promise)) {
      charge(synchronous, writes, true);
      return result;
    }
    const elapsed = () => (options.awaited ? performance.now() - started : synchronous);
    return result.then(
      (value) => {
        charge(elapsed(), writes, true);
        return value;
      },
      (error: unknown) => {
        charge(elapsed(), writes, false);
        throw error;
      },
    );
  };

  state.writeCheckpointSync = function timedSync(this: RuntimeState, ...parameters) {
    const started = performance.now();
    const outside = providerInsideSync;
    syncDepth += 1;
    let succeeded = false;
    try {
      const result = originals.writeCheckpointSync.apply(this, parameters);
      succeeded = true;
      return result;
    } finally {
      syncDepth -= 1;
      const inProvider = providerInsideSync - outside;
      if (syncDepth === 0) providerInsideSync = 0;
      const id = this.lineage.checkpointId;
      if (succeeded && id !== null) add(captureMs, id, performance.now() - started - inProvider);
    }
  };
  state.writeCheckpoint = function timedQueue(this: RuntimeState, ...parameters) {
    const started = performance.now();
    const result = originals.writeCheckpoint.apply(this, parameters);
    // The part the run pays inside its event; the write itself is charged where it happens. The
    // lineage names the checkpoint just taken (claimed before the write is queued).
    const id = this.lineage.checkpointId;
    if (id !== null) add(captureMs, id, performance.now() - started);
    return result;
  };
  if (inner.writeSync)
    provider.writeSync = function timedWriteSync(this: CheckpointProvider, location, write) {
      return timed([write], () => inner.writeSync!.call(this, location, write)) as ReturnType<
        NonNullable<CheckpointProvider['writeSync']>
      >;
    };
  provider.write = function timedWrite(this: CheckpointProvider, location, write) {
    return Promise.resolve(timed([write], () => inner.write.call(this, location, write)));
  };
  if (inner.writeBatch)
    provider.writeBatch = function timedWriteBatch(this: CheckpointProvider, location, writes) {
      return Promise.resolve(timed(writes, () => inner.writeBatch!.call(this, location, writes)));
    };

  return {
    times() {
      return {
        ids: [...storedIds],
        endToEndMs: storedIds.map((id) => (captureMs.get(id) ?? 0) + (shareMs.get(id) ?? 0)),
        providerMs: storedIds.map((id) => shareMs.get(id) ?? 0),
        groupSizes: [...groupSizes],
        commitMs: [...commitMs],
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
