// Restore and listing for the realistic benchmark (issue #13): one SQLite database filled with
// 10,000 checkpoints of realistic 50-task crews (one lineage per run), and LangGraph's SqliteSaver
// fed the same states in the same run (one thread per run). Then, from freshly opened stores, what a
// user pays to restore the latest checkpoint — `Crew.fromCheckpoint` on the database, and the
// provider's latest + read alone — beside `SqliteSaver.getTuple` of the latest thread, and the
// listing of all 10,000.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointRestoreCompletedEvent, EventBus } from '@crewline/events';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Crew } from '@crewline/runtime';
import { readDocument } from '@crewline/runtime-state';
import { collectGarbageIfExposed, type LatencySummary, summarize } from './bench-statistics.js';
import { playCheckpointed } from './realistic-measure.js';
import type { ProseSource } from './scenario/real-prose.js';
import { openLangGraphPeer, type Peer } from './scenario/realistic-peers.js';
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
  /** `SqliteSaver.getTuple` of the latest run's thread. */
  getTupleMs: LatencySummary;
  /** `provider.list(database)`: metadata of all the checkpoints. */
  listMs: LatencySummary;
  /** UTF-8 size of the latest checkpoint. */
  latestBytes: number;
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

/**
 * Fills the stores with at least `count` checkpoints of `tasksPerRun`-task realistic crews: a first,
 * shorter run makes up the difference, so that the latest checkpoint is the end of a whole run.
 */
export async function measureRestore(
  count: number,
  source: ProseSource,
  tasksPerRun = 50,
  rounds = 11,
): Promise<RestoreResult> {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-realistic-restore-'));
  const location = join(directory, 'many.db');
  try {
    // About 14 checkpoints a task (measured on the first run of the bench: 702 for 50 tasks).
    const perTask = 14;
    const fullRuns = Math.floor(count / (tasksPerRun * perTask));
    const firstTasks = Math.ceil((count - fullRuns * tasksPerRun * perTask) / perTask);
    const plan = [...(firstTasks > 0 ? [firstTasks] : []), ...Array(fullRuns).fill(tasksPerRun)] as number[];
    let written = 0;
    let lastPeer: Peer | undefined;
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
      if (index < plan.length - 1) await peer.close();
      else lastPeer = peer;
    }
    const reader = new SqliteProvider();
    const { registry } = createRealisticRun({ shape: 'crew', source });
    const bus = new EventBus();
    const loads: number[] = [];
    bus.on(CheckpointRestoreCompletedEvent, (_source, event) => {
      loads.push(event.durationMs);
    });
    const fromCheckpointMs = await time(rounds, () =>
      Crew.fromCheckpoint({ restoreFrom: location, provider: reader }, { registry, bus }),
    );
    // The untimed first call reported its load too.
    const fromCheckpointLoadMs = summarize(loads.slice(1));
    const providerReadMs = await time(rounds, async () => {
      const latest = await reader.latest(location);
      await readDocument(reader, location, latest!.id);
    });
    const getTuple: number[] = [];
    await lastPeer!.restoreLatest();
    for (let index = 0; index < rounds; index += 1) getTuple.push(await lastPeer!.restoreLatest());
    const listMs = await time(Math.max(3, Math.ceil(rounds / 2)), async () => {
      const listed = await reader.list(location);
      if (listed.length !== written) throw new Error(`listed ${listed.length} of ${written} checkpoints`);
    });
    const latestBytes = (await reader.latest(location))?.sizeBytes ?? 0;
    await reader.close();
    await lastPeer!.close();
    return {
      checkpoints: written,
      runs: plan.length,
      fromCheckpointMs,
      fromCheckpointLoadMs,
      providerReadMs,
      getTupleMs: summarize(getTuple),
      listMs,
      latestBytes,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
