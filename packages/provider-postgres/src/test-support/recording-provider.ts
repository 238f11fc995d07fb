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

  /** Reads every recorded checkpoint that is still stored and returns the ids whose text differs. */
  async mismatches(
    location: string,
    ids: Iterable<string> = this.written.keys(),
    reader: PostgresProvider = this,
  ) {
    const wrong: string[] = [];
    for (const id of ids) {
      const raw = await reader.read(location, id);
      if (!('text' in raw) || raw.text !== this.written.get(id)) wrong.push(id);
    }
    return wrong;
  }
}
