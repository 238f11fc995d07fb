import { readBackMismatches } from '@crewline/provider-testkit/fixtures';
import type { CheckpointWrite, StoredCheckpoint } from '@crewline/runtime-state';
import type { PostgresProviderOptions } from '../options.js';
import { PostgresProvider } from '../postgres-provider.js';

/**
 * A PostgresProvider that remembers the exact text of everything it was asked to write
 * (`CheckpointWrite.text()`), so a test can prove that reading gives back the same bytes.
 */
export class RecordingProvider extends PostgresProvider {
  readonly written = new Map<string, string>();

  constructor(options: PostgresProviderOptions = {}) {
    super({ poolSize: 2, ...options });
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

  /** Reads every recorded checkpoint that is still stored (through `reader`) and returns the ids whose text differs. */
  mismatches(
    location: string,
    ids: Iterable<string> = this.written.keys(),
    reader: PostgresProvider = this,
  ): Promise<string[]> {
    return readBackMismatches(reader, location, this.written, ids);
  }
}
