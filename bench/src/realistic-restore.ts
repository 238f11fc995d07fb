// Restore and listing for the realistic benchmark (issue #13): one SQLite database filled with
// 10,000 checkpoints of realistic 50-task crews (one lineage per run), and LangGraph's SqliteSaver
// fed the same states in the same run (one thread per run). Then, from freshly opened stores, what a
// user pays to restore the latest checkpoint — `Crew.fromCheckpoint` on the database, and the
// provider's latest + read alone — beside `SqliteSaver.getTuple` of the latest thread, and the
// listing of all 10,000.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointRestoreCompletedEvent, EventBus } from '@crewline/events';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Crew } from '@crewline/runtime';
import { readDocument } from '@crewline/runtime-state';
import { collectGarbageIfExposed, type LatencySummary, summarize } from './bench-statistics.js';
import { playCheckpointed } from './realistic-measure.js';
import type { ProseSource } from './scenario/real-prose.js';
import { openLangGraphPeer } from './scenario/realistic-peers.js';
import { createRealisticRun } from './scenario/realistic-run.js';

export interface RestoreResult {
  checkpoints: number;
  runs: number;
  /** `Crew.fromCheckpoint({ restoreFrom: database })`: latest, read, validate, rebuild the crew. */
  fromCheckpointMs: LatencySummary;
  /**
   * Of each of those, the loading of the checkpoint (resolve, read, validate), as its
   * `checkpoint_restore_completed` event reports it; the rest is rebuilding the crew.
   */
  fromCheckpointLoadMs: LatencySummary;
  /** The provider alone: `latest` then `readDocument` of it. */
  providerReadMs: LatencySummary;
  /**
   * The same, then every event read: the whole document parsed, as getTuple gives its checkpoint, and
   * what a resumed run parses before it continues (a restore alone leaves the events as stored lines).
   */
  providerReadWithEventsMs: LatencySummary;
  /** `SqliteSaver.getTuple` of the latest run's thread. */
  getTupleMs: LatencySummary;
  /**
   * The process's CPU time (user + system, every thread) of each timed call of the four restores: on
   * a shared machine a call is often descheduled, and wall time then measures the load as much as
   * the code.
   */
  cpuMs: {
    fromCheckpoint: LatencySummary;
    providerRead: LatencySummary;
    providerReadWithEvents: LatencySummary;
    getTuple: LatencySummary;
  };
  /** `provider.list(database)`: metadata of all the checkpoints. */
  listMs: LatencySummary;
  /** UTF-8 size of the latest checkpoint. */
  latestBytes: number;
  /** True when the stores were filled by an earlier run and reused (`keepIn`). */
  reusedStores: boolean;
}

async function time(repeat: number, action: () => Promise<unknown>): Promise<LatencySummary> {
  // One untimed call first: the first read of a freshly opened store pays for opening it.
  await action();
  collectGarbageIfExposed();
  const samples: number[] = [];
  for (let index = 0; index < repeat; index += 1) {
    const started = performance.now();
    await action();
    samples.push(performance.now() - started);
  }
  return summarize(samples);
}

/** Every order of `items`. */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]),
  );
}

/** What {@link fillRestoreStores} wrote into a directory, kept beside the stores for reuse. */
interface FilledStores {
  checkpoints: number;
  runs: number;
  /** What was asked: a directory filled for other figures is filled again. */
  asked: { count: number; tasksPerRun: number };
}

const FILLED_MARKER = 'filled.json';

/**
 * Fills the stores with at least `count` checkpoints of `tasksPerRun`-task realistic crews: a first,
 * shorter run makes up the difference, so that the latest checkpoint is the end of a whole run.
 */
async function fillRestoreStores(
  directory: string,
  count: number,
  source: ProseSource,
  tasksPerRun: number,
): Promise<FilledStores> {
  const location = join(directory, 'many.db');
  // About 14 checkpoints a task (measured on the first run of the bench: 702 for 50 tasks).
  const perTask = 14;
  const fullRuns = Math.floor(count / (tasksPerRun * perTask));
  const firstTasks = Math.ceil((count - fullRuns * tasksPerRun * perTask) / perTask);
  const plan = [...(firstTasks > 0 ? [firstTasks] : []), ...Array(fullRuns).fill(tasksPerRun)] as number[];
  let written = 0;
  for (const [index, tasks] of plan.entries()) {
    const writer = new SqliteProvider();
    const peer = await openLangGraphPeer(directory, `run-${index}`);
    const played = await playCheckpointed({
      run: { shape: 'crew', tasks, source },
      provider: writer,
      location,
      peers: [peer],
    });
    written += played.endToEndMs.length;
    await writer.close();
    await peer.close();
  }
  const filled: FilledStores = { checkpoints: written, runs: plan.length, asked: { count, tasksPerRun } };
  writeFileSync(join(directory, FILLED_MARKER), `${JSON.stringify(filled)}\n`);
  return filled;
}

/** The stores a directory already holds for these figures, if a fill of it completed. */
function filledBefore(directory: string, count: number, tasksPerRun: number): FilledStores | undefined {
  const marker = join(directory, FILLED_MARKER);
  if (!existsSync(marker)) return undefined;
  const filled = JSON.parse(readFileSync(marker, 'utf8')) as FilledStores;
  return filled.asked?.count === count && filled.asked.tasksPerRun === tasksPerRun ? filled : undefined;
}

/**
 * Fills the stores (or, with `keepIn`, reuses the ones a previous fill left there) and measures
 * restore and listing on them from freshly opened stores.
 */
export async function measureRestore(
  count: number,
  source: ProseSource,
  tasksPerRun = 50,
  rounds = 24,
  keepIn?: string,
): Promise<RestoreResult> {
  if (keepIn !== undefined) mkdirSync(keepIn, { recursive: true });
  const directory = keepIn ?? mkdtempSync(join(tmpdir(), 'crewline-realistic-restore-'));
  const location = join(directory, 'many.db');
  try {
    let filled = keepIn === undefined ? undefined : filledBefore(directory, count, tasksPerRun);
    const reusedStores = filled !== undefined;
    if (filled === undefined) {
      for (const name of readdirSync(directory))
        rmSync(join(directory, name), { recursive: true, force: true });
      filled = await fillRestoreStores(directory, count, source, tasksPerRun);
    }
    const written = filled.checkpoints;
    const lastPeer = await openLangGraphPeer(directory, `run-${filled.runs - 1}`);
    const reader = new SqliteProvider();
    const { registry } = createRealisticRun({ shape: 'crew', source });
    const bus = new EventBus();
    const loads: number[] = [];
    bus.on(CheckpointRestoreCompletedEvent, (_source, event) => {
      loads.push(event.durationMs);
    });
    // Interleaved round by round (one untimed call of each first: the first read of a freshly opened
    // store pays for opening it), so a change of load on the shared machine falls on all three. The
    // order goes through every permutation, and the heap is collected before each timed call: in a
    // fixed cyclic order one restore always ran after the same other one and paid for collecting its
    // garbage (SqliteSaver's parsed state, a megabyte of objects, landed on Crew.fromCheckpoint).
    const subjects = {
      fromCheckpoint: () =>
        Crew.fromCheckpoint({ restoreFrom: location, provider: reader }, { registry, bus }),
      providerRead: async () => {
        const latest = await reader.latest(location);
        await readDocument(reader, location, latest!.id);
      },
      providerReadWithEvents: async () => {
        const latest = await reader.latest(location);
        const document = await readDocument(reader, location, latest!.id);
        if (document.events.length !== document.metadata.eventCount) throw new Error('events missing');
      },
      getTuple: () => lastPeer.restoreLatest(),
    };
    const samples = {
      fromCheckpoint: [] as number[],
      providerRead: [] as number[],
      providerReadWithEvents: [] as number[],
      getTuple: [] as number[],
    };
    const cpuSamples = {
      fromCheckpoint: [] as number[],
      providerRead: [] as number[],
      providerReadWithEvents: [] as number[],
      getTuple: [] as number[],
    };
    const names = Object.keys(subjects) as (keyof typeof subjects)[];
    for (const name of names) await subjects[name]();
    const orders = permutations(names);
    for (let round = 0; round < rounds; round += 1) {
      for (const name of orders[round % orders.length]!) {
        collectGarbageIfExposed();
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        await subjects[name]();
        samples[name].push(performance.now() - started);
        const cpu = process.cpuUsage(cpuBefore);
        cpuSamples[name].push((cpu.user + cpu.system) / 1000);
      }
    }
    const fromCheckpointMs = summarize(samples.fromCheckpoint);
    // The untimed first call reported its load too.
    const fromCheckpointLoadMs = summarize(loads.slice(1));
    const providerReadMs = summarize(samples.providerRead);
    const listMs = await time(Math.max(3, Math.ceil(rounds / 2)), async () => {
      const listed = await reader.list(location);
      if (listed.length !== written) throw new Error(`listed ${listed.length} of ${written} checkpoints`);
    });
    const latestBytes = (await reader.latest(location))?.sizeBytes ?? 0;
    await reader.close();
    await lastPeer.close();
    return {
      checkpoints: written,
      runs: filled.runs,
      fromCheckpointMs,
      fromCheckpointLoadMs,
      providerReadMs,
      providerReadWithEventsMs: summarize(samples.providerReadWithEvents),
      getTupleMs: summarize(samples.getTuple),
      cpuMs: {
        fromCheckpoint: summarize(cpuSamples.fromCheckpoint),
        providerRead: summarize(cpuSamples.providerRead),
        providerReadWithEvents: summarize(cpuSamples.providerReadWithEvents),
        getTuple: summarize(cpuSamples.getTuple),
      },
      listMs,
      latestBytes,
      reusedStores,
    };
  } finally {
    if (keepIn === undefined) rmSync(directory, { recursive: true, force: true });
  }
}
