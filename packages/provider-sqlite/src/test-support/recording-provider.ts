import { readBackMismatches } from '@crewline/provider-testkit/fixtures';
import type { CheckpointWrite, StoredCheckpoint } from '@crewline/runtime-state';
import type { SqliteProviderOptions } from '../options.js';
import { SqliteProvider } from '../sqlite-provider.js';

/**
 * A SqliteProvider that remembers the exact text of everything it was asked to write
 * (`CheckpointWrite.text()`), so a test can prove that reading gives back the same bytes.
 */
export class RecordingProvider extends SqliteProvider {
  readonly written = new Map<string, string>();

  constructor(options: SqliteProviderOptions = {}) {
    super(options);
  }

  override writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    const stored = super.writeSync(location, checkpoint);
    this.written.set(stored.id, checkpoint.text());
    return stored;
  }

  override async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    const stored = await super.write(location, checkpoint);
    this.written.set(stored.id, checkpoint.text());
    return stored;
  }

  override async writeBatch(
    location: string,
    checkpoints: readonly CheckpointWrite[],
  ): Promise<StoredCheckpoint[]> {
    const stored = await super.writeBatch(location, checkpoints);
    for (const [index, checkpoint] of checkpoints.entries())
      this.written.set(stored[index]!.id, checkpoint.text());
    return stored;
  }

  /** Reads every recorded checkpoint that is still stored and returns the ids whose text differs. */
  mismatches(location: string, ids: Iterable<string> = this.written.keys()): Promise<string[]> {
    return readBackMismatches(this, location, this.written, ids);
  }
}
