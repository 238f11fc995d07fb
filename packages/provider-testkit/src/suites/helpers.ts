import type { CheckpointMetadata, CheckpointProvider, StoredCheckpoint } from '@crewline/runtime-state';
import { buildCheckpointWrite, checkpointIdAt } from '../fixtures/test-run.js';

export interface PlannedCheckpoint {
  /** Minutes after 2026-01-01T00:00Z (decides id order and `createdAt`). */
  minute: number;
  branch?: string;
  lineageId?: string;
  parentId?: string | null;
  /** The planned checkpoint (by its minute, written earlier) that is this one's parent. */
  parentMinute?: number;
  /** `createdAt`, when it should differ from the time in the id. */
  createdAt?: string;
}

const base = Date.UTC(2026, 0, 1);

/** Writes checkpoints with chosen ids, branches, lineages and times; returns their metadata by minute. */
export async function writePlanned(
  provider: CheckpointProvider,
  location: string,
  planned: readonly PlannedCheckpoint[],
): Promise<Map<number, { metadata: CheckpointMetadata; stored: StoredCheckpoint }>> {
  const written = new Map<number, { metadata: CheckpointMetadata; stored: StoredCheckpoint }>();
  for (const plan of planned) {
    const time = new Date(base + plan.minute * 60_000);
    const write = buildCheckpointWrite({
      metadata: {
        id: checkpointIdAt(time, (0x10000000 + plan.minute).toString(16).slice(-8)),
        createdAt: plan.createdAt ?? time.toISOString(),
        branch: plan.branch ?? 'main',
        ...(plan.lineageId === undefined ? {} : { lineageId: plan.lineageId }),
        parentId:
          plan.parentMinute === undefined
            ? (plan.parentId ?? null)
            : written.get(plan.parentMinute)!.metadata.id,
      },
    });
    const stored = await provider.write(location, write);
    written.set(plan.minute, { metadata: write.metadata, stored });
  }
  return written;
}

/** Ids of the planned checkpoints at `minutes`, in that order. */
export function plannedIds(
  written: Map<number, { metadata: CheckpointMetadata }>,
  minutes: readonly number[],
): string[] {
  return minutes.map((minute) => written.get(minute)!.metadata.id);
}

/**
 * A linear run: checkpoints at `minutes` of lineage `lineageId` on `branch`, each the parent of the
 * next; the first one's parent is `firstParentMinute` (a fork) or none.
 */
export function plannedRun(
  lineageId: string,
  minutes: readonly number[],
  options: { branch?: string; firstParentMinute?: number; createdAt?: readonly string[] } = {},
): PlannedCheckpoint[] {
  return minutes.map((minute, index) => ({
    minute,
    lineageId,
    ...(options.branch === undefined ? {} : { branch: options.branch }),
    ...(index > 0
      ? { parentMinute: minutes[index - 1]! }
      : options.firstParentMinute === undefined
        ? {}
        : { parentMinute: options.firstParentMinute }),
    ...(options.createdAt?.[index] === undefined ? {} : { createdAt: options.createdAt[index] }),
  }));
}

/** Planned checkpoints in the order of their minutes (the order they must be written in). */
export function byMinute(...runs: readonly PlannedCheckpoint[][]): PlannedCheckpoint[] {
  return runs.flat().sort((left, right) => left.minute - right.minute);
}
