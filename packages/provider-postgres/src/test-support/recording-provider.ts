import { readBackMismatches, recordWrittenTexts } from '@crewline/provider-testkit/fixtures';
import type { PostgresProviderOptions } from '../options.js';
import { PostgresProvider } from '../postgres-provider.js';

/**
 * A PostgresProvider that remembers the exact text of everything it was asked to write
 * (`CheckpointWrite.text()`), so a test can prove that reading gives back the same bytes.
 */
export class RecordingProvider extends PostgresProvider {
  readonly written: Map<string, string>;

  constructor(options: PostgresProviderOptions = {}) {
    super({ poolSize: 2, ...options });
    this.written = recordWrittenTexts(this);
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
