// What a JSON barrier costs as the group it writes grows in files and in bytes, measured beside the
// run-overhead runs (issue 13): JsonProvider.writeBatch — spare temp files opened with O_SYNC, one
// gathering write each, renames, one directory fsync — of groups shaped like crew-50's on '*' (2
// files at a model or tool call, 6 where one task ends and the next starts), with files as small as
// crew-50's first checkpoints and as large as its average one. Whether a barrier pays for its bytes
// or for the number of files it syncs decides what is worth shrinking: a layout that stores a
// repeated answer once saves bytes, not files.
import { join } from 'node:path';
import type { EventRecord } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import {
  type CheckpointWrite,
  createCheckpointWrite,
  newCheckpointId,
  newLineageId,
} from '@crewline/runtime-state';

/** One shape of group and the median time JsonProvider took to write it. */
export interface BarrierProbeRow {
  files: number;
  /** Bytes of each file of the group (about). */
  fileBytes: number;
  medianMs: number;
}

export interface BarrierProbeOptions {
  /** Where the probe's location goes (removed by the caller). */
  directory: string;
  /** Groups written per shape, shapes interleaved. Default 40. */
  rounds?: number;
  /** Files per group. Default `[2, 6]` (crew-50's two kinds of barrier). */
  files?: readonly number[];
  /** Bytes per file. Default `[50_000, 375_000]` (crew-50's early files, and its average file). */
  fileBytes?: readonly number[];
  /** Pause between groups, as a run waits for its model between barriers. Default 10 ms. */
  pauseMs?: number;
}

/** An answer-sized event (2 KB of text), as crew-50's completed calls and tasks carry. */
function answerEvent(sequence: number): EventRecord {
  return {
    type: 'task_completed',
    eventId: `probe-event-${sequence}`,
    sequence,
    timestamp: new Date(0).toISOString(),
    output: `answer ${sequence}: ${'findings and notes, '.repeat(100)}`,
  };
}

/** A chain of `count` checkpoints of one lineage, each file about `bytes` long, their bytes built. */
function groupOfWrites(count: number, bytes: number, parentId: string | null): CheckpointWrite[] {
  const events = Array.from({ length: Math.max(1, Math.round(bytes / 2100)) }, (_, index) =>
    answerEvent(index + 1),
  );
  // One cache of event lines for the group, as a run keeps one: the lines are encoded once.
  const eventBytes: (Buffer | undefined)[] = [];
  const lineageId = newLineageId();
  const writes: CheckpointWrite[] = [];
  let parent = parentId;
  for (let index = 0; index < count; index += 1) {
    const id = newCheckpointId();
    const write = createCheckpointWrite({
      metadata: {
        id,
        createdAt: new Date().toISOString(),
        lineageId,
        parentId: parent,
        branch: 'main',
        trigger: 'task_completed',
        entities: [],
        eventCount: events.length,
      },
      inputs: { json: {} },
      entities: [],
      events,
      parentEventCount: 0,
      eventBytes,
    });
    // Built before the clock starts: a run's groups come from lines it encoded at each event.
    write.byteChunks?.();
    writes.push(write);
    parent = id;
  }
  return writes;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Writes groups of every shape, interleaved, through one JsonProvider, and returns their medians. */
export async function probeBarrierGroups(options: BarrierProbeOptions): Promise<BarrierProbeRow[]> {
  const rounds = options.rounds ?? 40;
  const pauseMs = options.pauseMs ?? 10;
  const shapes = (options.files ?? [2, 6]).flatMap((files) =>
    (options.fileBytes ?? [50_000, 375_000]).map((fileBytes) => ({ files, fileBytes })),
  );
  const location = join(options.directory, 'barrier-probe');
  const provider = new JsonProvider();
  const timings = shapes.map(() => [] as number[]);
  let parentId: string | null = null;
  try {
    // Round 0 warms up (the location, its spares, the modules) and is not counted.
    for (let round = 0; round <= rounds; round += 1) {
      for (let step = 0; step < shapes.length; step += 1) {
        const index = (step + round) % shapes.length;
        const { files, fileBytes } = shapes[index]!;
        const writes = groupOfWrites(files, fileBytes, parentId);
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        const started = performance.now();
        await provider.writeBatch(location, writes);
        const elapsed = performance.now() - started;
        parentId = writes.at(-1)!.metadata.id;
        if (round > 0) timings[index]!.push(elapsed);
      }
    }
  } finally {
    await provider.close();
  }
  return shapes.map((shape, index) => ({ ...shape, medianMs: median(timings[index]!) }));
}
