import type { CheckpointMetadata, CheckpointProvider, StoredCheckpoint } from '@crewline/runtime-state';
import { buildCheckpointWrite, checkpointIdAt } from '../fixtures/test-run.js';

export interface PlannedCheckpoint {
  /** Minutes after 2026-01-01T00:00Z (decides id order and `createdAt`). */
  minute: number;
  branch?: string;
  lineageId?: string;
  parentId?: string | null;
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
        parentId: plan.parentId ?? null,
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
