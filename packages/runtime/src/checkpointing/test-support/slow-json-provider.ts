import { JsonProvider } from '@crewline/provider-json';
import type { CheckpointWrite, StoredCheckpoint } from '@crewline/runtime-state';

/**
 * The JSON provider (background writes and all) whose async writes wait `delayMs` before they
 * start, so that automatic checkpoints queue up behind them. Synchronous writes are not slowed.
 */
export class SlowJsonProvider extends JsonProvider {
  /** Checkpoints handed to `write`/`writeBatch` and not written yet. */
  pending = 0;
  /** The most checkpoints one `writeBatch` was given (more than 1: writes queued up). */
  largestBatch = 0;

  constructor(private readonly delayMs: number) {
    super();
  }

  override async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    this.pending += 1;
    try {
      await sleep(this.delayMs);
      return await super.write(location, checkpoint);
    } finally {
      this.pending -= 1;
    }
  }

  override async writeBatch(
    location: string,
    checkpoints: readonly CheckpointWrite[],
  ): Promise<StoredCheckpoint[]> {
    this.pending += checkpoints.length;
    this.largestBatch = Math.max(this.largestBatch, checkpoints.length);
    try {
      await sleep(this.delayMs);
      return await super.writeBatch(location, checkpoints);
    } finally {
      this.pending -= checkpoints.length;
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
