// One variant of the realistic benchmark (issue #13): a whole run on the runtime checkpointing on '*'
// to SqliteProvider, timing what the run pays for each checkpoint (`state.checkpoint()` end to end:
// snapshot, redaction and the provider's write) and the provider's write alone, while LangGraph's
// SqliteSaver and Mastra's LibSQLStore store the very same states in the same run. Peers are fed at
// the run's tool calls (where a real run waits on I/O), so their work never lands inside a timed
// crewline checkpoint.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteProvider } from '@crewline/provider-sqlite';
import type { CheckpointWrite } from '@crewline/runtime-state';
import { collectGarbageIfExposed } from './bench-statistics.js';
import { timeCheckpoints } from './cost/checkpoint-timing.js';
import { replayStoredRows } from './cost/sqlite-floor.js';
import type { ProseSource } from './scenario/real-prose.js';
import { openLangGraphPeer, openMastraPeer, type Peer } from './scenario/realistic-peers.js';
import { createRealisticRun, type RealisticOptions } from './scenario/realistic-run.js';

/** Writes per window of the growth columns. */
export const WINDOW = 250;

/** One variant: the run's shape and sizes, and how its peers are fed. */
export interface RealisticVariant {
  /** Label in the report (`'crew, 50 tasks'`). */
  label: string;
  shape: RealisticOptions['shape'];
  tasks: number;
  /** Default 2048. */
  outputBytes?: number;
  /**
   * Peers store every `peerEvery`-th state only (1: every one). Each stored state is still the whole
   * state at that checkpoint, so their per-call medians stay comparable; their storage does not.
   * Default 1.
   */
  peerEvery?: number;
  /** Run the peers at all. Default true. */
  peers?: boolean;
  /** Runs of this variant, interleaved with the other variants' runs; samples are pooled. Default 1. */
  rounds?: number;
  /** SqliteProvider's `groupCommit` (one transaction per group of automatic checkpoints). Default false, as the provider's. */
  groupCommit?: boolean;
}

/** Times of one peer over the run. */
export interface PeerTimes {
  name: string;
  putMs: number[];
  storedBytes: number;
}

/** What one variant measured. */
export interface VariantResult {
  variant: RealisticVariant;
  /**
   * Runs pooled in the sample arrays, interleaved by checkpoint: sample `i * rounds + r` is the
   * `i`-th checkpoint of run `r` (see {@link mergeRounds}). 1 for a single run.
   */
  rounds: number;
  /** `state.checkpoint()` end to end, per checkpoint, in ms. */
  endToEndMs: number[];
  /** The provider call that stored it, per checkpoint (a group's call split evenly), in ms. */
  providerMs: number[];
  /** Checkpoints per provider call (per commit), mean over the runs. */
  checkpointsPerCommit: number;
  /** Each commit's whole time, in ms, every run's pooled. */
  commitMs: number[];
  /**
   * SQLite alone, per checkpoint: the rows it added replayed as one transaction into a fresh
   * database of the same layout (cost/sqlite-floor.ts), in ms. The floor under the provider's write.
   */
  floorMs: number[];
  peers: PeerTimes[];
  /** UTF-8 size of the final checkpoint's document, as the provider lists it. */
  finalBytes: number;
  /** Database + WAL on disk at the end of the run, provider still open. */
  openBytes: number;
  /** Database + WAL after the provider closed. */
  closedBytes: number;
  wallMs: number;
  modelCalls: number;
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** What {@link playCheckpointed} timed (see cost/checkpoint-timing.ts). */
export interface PlayedRun {
  endToEndMs: number[];
  providerMs: number[];
  /** Checkpoints per provider call (one commit each). */
  groupSizes: number[];
  /** Each provider call's whole time (what the run waits for at a barrier), in ms. */
  commitMs: number[];
  /** Each peer's time per call, in the order of `peers`. */
  peerMs: number[][];
  wallMs: number;
  modelCalls: number;
}

/**
 * Plays one realistic run checkpointing on '*' to `provider` at `location`, timing every
 * `state.checkpoint()` end to end and the provider's write alone; every `peerEvery`-th state is
 * handed to each of `peers` at the run's next tool call (or at its end).
 */
export async function playCheckpointed(options: {
  run: Omit<RealisticOptions, 'onToolCall'>;
  provider: SqliteProvider;
  location: string;
  peers: readonly Peer[];
  peerEvery?: number;
}): Promise<PlayedRun> {
  const { provider, location, peers } = options;
  const peerEvery = options.peerEvery ?? 1;
  const peerMs: number[][] = peers.map(() => []);

  // What was stored since the peers were last fed: the write and how many events it held (the
  // events array may be the run's own, which keeps growing).
  let pending: { write: CheckpointWrite; eventCount: number }[] = [];
  let stored = 0;
  const feedPeers = async () => {
    const batch = pending;
    pending = [];
    for (const { write, eventCount } of batch) {
      const state = {
        inputs: write.document.inputs,
        entities: write.document.entities,
        events: write.document.events.slice(0, eventCount),
      };
      for (const [index, peer] of peers.entries()) peerMs[index]!.push(await peer.put(state));
    }
  };
  const run = createRealisticRun({ ...options.run, onToolCall: feedPeers });
  const timing = timeCheckpoints(provider, (write) => {
    if (stored % peerEvery === 0 && peers.length > 0)
      pending.push({ write, eventCount: write.document.events.length });
    stored += 1;
  });
  collectGarbageIfExposed();
  const started = performance.now();
  try {
    // A long lease: without model latency the run rarely yields to the timer that renews it.
    await run.kickoff({ location, provider, onEvents: ['*'], leaseTtlMs: 3_600_000 });
    await feedPeers();
  } finally {
    timing.stop();
  }
  const { endToEndMs, providerMs, groupSizes, commitMs } = timing.times();
  return {
    endToEndMs,
    providerMs,
    groupSizes,
    commitMs,
    peerMs,
    wallMs: performance.now() - started,
    modelCalls: run.modelCalls(),
  };
}

/** Runs `variant` once in this process with a fresh database and fresh peers. */
export async function measureVariant(variant: RealisticVariant, source: ProseSource): Promise<VariantResult> {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-realistic-'));
  const location = join(directory, 'run.db');
  const provider = new SqliteProvider({ groupCommit: variant.groupCommit ?? false });
  try {
    const peers: Peer[] =
      variant.peers === false
        ? []
        : [await openLangGraphPeer(directory, variant.label), await openMastraPeer(directory, variant.label)];
    const played = await playCheckpointed({
      run: {
        shape: variant.shape,
        tasks: variant.tasks,
        ...(variant.outputBytes !== undefined ? { outputBytes: variant.outputBytes } : {}),
        source,
      },
      provider,
      location,
      peers,
      ...(variant.peerEvery !== undefined ? { peerEvery: variant.peerEvery } : {}),
    });
    const latest = await provider.latest(location);
    const openBytes = fileSize(location) + fileSize(`${location}-wal`);
    await provider.close();
    const closedBytes = fileSize(location) + fileSize(`${location}-wal`);
    const floorMs = replayStoredRows(location, join(directory, 'floor.db'));
    const peerTimes: PeerTimes[] = [];
    for (const [index, peer] of peers.entries())
      peerTimes.push({ name: peer.name, putMs: played.peerMs[index]!, storedBytes: await peer.close() });
    return {
      variant,
      rounds: 1,
      endToEndMs: played.endToEndMs,
      providerMs: played.providerMs,
      checkpointsPerCommit: played.providerMs.length / Math.max(1, played.groupSizes.length),
      commitMs: played.commitMs,
      floorMs,
      peers: peerTimes,
      finalBytes: latest?.sizeBytes ?? 0,
      openBytes,
      closedBytes,
      wallMs: played.wallMs,
      modelCalls: played.modelCalls,
    };
  } finally {
    await provider.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Sample `i * runs.length + r` is `runs[r][i]`, up to the shortest run (runs of one variant are equal). */
function interleave(runs: readonly (readonly number[])[]): number[] {
  const length = Math.min(...runs.map((run) => run.length));
  const merged: number[] = [];
  for (let index = 0; index < length; index += 1) for (const run of runs) merged.push(run[index]!);
  return merged;
}

function middle(values: readonly number[]): number {
  return [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)]!;
}

/**
 * Several runs of one variant as one result: samples pooled and interleaved by checkpoint (so each
 * window of the growth table holds that window of every run), sizes the median run's.
 */
export function mergeRounds(runs: readonly VariantResult[]): VariantResult {
  if (runs.length === 1) return runs[0]!;
  const first = runs[0]!;
  return {
    variant: first.variant,
    rounds: runs.length,
    endToEndMs: interleave(runs.map((run) => run.endToEndMs)),
    providerMs: interleave(runs.map((run) => run.providerMs)),
    checkpointsPerCommit: runs.reduce((sum, run) => sum + run.checkpointsPerCommit, 0) / runs.length,
    commitMs: runs.flatMap((run) => run.commitMs),
    floorMs: interleave(runs.map((run) => run.floorMs)),
    peers: first.peers.map((peer, index) => ({
      name: peer.name,
      putMs: interleave(runs.map((run) => run.peers[index]!.putMs)),
      storedBytes: middle(runs.map((run) => run.peers[index]!.storedBytes)),
    })),
    finalBytes: middle(runs.map((run) => run.finalBytes)),
    openBytes: middle(runs.map((run) => run.openBytes)),
    closedBytes: middle(runs.map((run) => run.closedBytes)),
    wallMs: middle(runs.map((run) => run.wallMs)),
    modelCalls: first.modelCalls,
  };
}
