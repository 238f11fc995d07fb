import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  type CheckpointProvider,
  type CheckpointWrite,
  encodeValue,
  redactSecrets,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { bytesWrittenByProcess } from './bench-statistics.js';
import type { SnapshotStyle } from './scenario/bench-crew.js';
import type { Crew50Run } from './scenario/crew-50.js';

/** What one measured crew-50 run of a storage backend produced. */
export interface StorageRunResult {
  /** Time of each checkpoint write inside the backend, in ms. */
  writeMs: number[];
  /** Time of each whole `state.writeCheckpointSync()` (snapshot, redaction and write), in ms; crewline only. */
  endToEndMs?: number[];
  /** Bytes the backend keeps once closed (database file, or all checkpoint files). */
  storedBytes: number;
  /** Bytes this process passed to write(2) from the backend's opening until it closed (WAL frames, WAL checkpoints, files...). */
  bytesWritten: number | undefined;
  /** UTF-8 size of the last checkpoint's document text. */
  finalCheckpointBytes: number;
}

/** One backend taking part in a crew-50 run: writes a checkpoint after each event, then reports. */
export interface StorageSession {
  afterEvent(trigger: string): Promise<void>;
  finish(): Promise<StorageRunResult>;
}

/** A storage backend measured on the crew-50 scenario. */
export interface StorageSubject {
  name: string;
  /** Snapshot style of the crew for this backend's runs, when not the scenario's. */
  snapshots?: SnapshotStyle;
  /** Joins `run`, storing into a fresh location under `directory`. */
  open(directory: string, run: Crew50Run): StorageSession;
}

/**
 * Counts the bytes this process passes to write(2) from a backend's opening until it has closed:
 * WAL frames, WAL checkpoints (idle-time ones included) and files. The benchmark plays one backend
 * per run, so the count is that backend's alone.
 */
function runWriteMeter() {
  const started = bytesWrittenByProcess();
  return {
    finish(): number | undefined {
      const ended = bytesWrittenByProcess();
      return started === undefined || ended === undefined ? undefined : ended - started;
    },
  };
}

/** Total size of the files a location left behind (a database and its siblings, or a directory). */
export function storedBytesOf(location: string): number {
  if (existsSync(location) && lstatSync(location).isDirectory()) {
    let total = 0;
    for (const entry of readdirSync(location, { withFileTypes: true, recursive: true })) {
      if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
    }
    return total;
  }
  const name = basename(location);
  let total = 0;
  for (const entry of readdirSync(dirname(location), { withFileTypes: true })) {
    if (entry.isFile() && entry.name.startsWith(name))
      total += statSync(join(dirname(location), entry.name)).size;
  }
  return total;
}

/** Wraps a provider so that each write is timed (the backend's own time, nothing around it). */
export function timedProvider(
  inner: CheckpointProvider,
  samples: number[],
  last: { write?: CheckpointWrite },
): CheckpointProvider {
  const timed: CheckpointProvider = {
    kind: inner.kind,
    contractVersion: inner.contractVersion,
    capabilities: inner.capabilities,
    resolveLocation: (location) => inner.resolveLocation(location),
    parseReference: (reference) => inner.parseReference(reference),
    async write(location, checkpoint) {
      last.write = checkpoint;
      const started = performance.now();
      const stored = await inner.write(location, checkpoint);
      samples.push(performance.now() - started);
      return stored;
    },
    read: (location, id) => inner.read(location, id),
    list: (location, query) => inner.list(location, query),
    latest: (location, query) => inner.latest(location, query),
    prune: (location, options) => inner.prune(location, options),
    delete: (location, id) => inner.delete(location, id),
    close: () => inner.close?.(),
  };
  if (inner.writeSync) {
    const writeSync = inner.writeSync.bind(inner);
    timed.writeSync = (location, checkpoint): StoredCheckpoint => {
      last.write = checkpoint;
      const started = performance.now();
      const stored = writeSync(location, checkpoint);
      samples.push(performance.now() - started);
      return stored;
    };
  }
  return timed;
}

/**
 * A crewline provider on crew-50, through its own RuntimeState of the shared run:
 * `writeCheckpointSync` when the provider can write synchronously (as `state.checkpoint()` and sync
 * handlers do), else `await writeCheckpoint`.
 */
export function crewlineSubject(
  name: string,
  createProvider: () => CheckpointProvider,
  snapshots?: SnapshotStyle,
): StorageSubject {
  return {
    name,
    snapshots,
    open(directory, run) {
      const writeMs: number[] = [];
      const endToEndMs: number[] = [];
      const last: { write?: CheckpointWrite } = {};
      const meter = runWriteMeter();
      const inner = createProvider();
      const provider = timedProvider(inner, writeMs, last);
      const location = provider.resolveLocation(join(directory, `${inner.kind}-${name.length}-crew-50`));
      const state = run.addState({ provider, location });
      return {
        async afterEvent(trigger) {
          const started = performance.now();
          if (provider.writeSync) state.writeCheckpointSync({ trigger });
          else await state.writeCheckpoint({ trigger });
          endToEndMs.push(performance.now() - started);
        },
        async finish() {
          await state.settle();
          await inner.close?.();
          return {
            writeMs,
            endToEndMs,
            storedBytes: storedBytesOf(location),
            bytesWritten: meter.finish(),
            finalCheckpointBytes: Buffer.byteLength(last.write!.text(), 'utf8'),
          };
        },
      };
    },
  };
}

/**
 * LangGraph's `SqliteSaver.put` fed the same state sequence the way a LangGraph graph would store it:
 * the whole state (inputs, entities, event history) as channel values of every checkpoint.
 */
export async function langGraphSubject(): Promise<StorageSubject> {
  const [{ SqliteSaver }, { uuid6 }, { default: Database }] = await Promise.all([
    import('@langchain/langgraph-checkpoint-sqlite'),
    import('@langchain/langgraph-checkpoint'),
    import('better-sqlite3'),
  ]);
  return {
    name: 'LangGraph SqliteSaver',
    open(directory, run) {
      const location = join(directory, 'langgraph-crew-50.sqlite');
      const db = new Database(location);
      const saver = new SqliteSaver(db);
      const writeMs: number[] = [];
      const meter = runWriteMeter();
      let parentId: string | undefined;
      let step = 0;
      let finalCheckpointBytes = 0;
      return {
        async afterEvent(trigger) {
          const { entities } = run.state.snapshot(trigger);
          const channelValues = {
            inputs: redactSecrets(encodeValue(run.state.inputs)),
            entities,
            events: run.state.events.slice(),
          };
          const checkpoint = {
            v: 4,
            id: uuid6(step),
            ts: new Date().toISOString(),
            channel_values: channelValues,
            channel_versions: { inputs: 1, entities: step + 1, events: step + 1 },
            versions_seen: {},
          };
          const config = {
            configurable: { thread_id: 'crew-50', checkpoint_ns: '', checkpoint_id: parentId },
          };
          const started = performance.now();
          const next = await saver.put(config, checkpoint, { source: 'loop', step, parents: {} });
          writeMs.push(performance.now() - started);
          parentId = next.configurable?.checkpoint_id as string;
          step += 1;
          finalCheckpointBytes = Buffer.byteLength(JSON.stringify(channelValues), 'utf8');
        },
        async finish() {
          db.close();
          return {
            writeMs,
            storedBytes: storedBytesOf(location),
            bytesWritten: meter.finish(),
            finalCheckpointBytes,
          };
        },
      };
    },
  };
}
