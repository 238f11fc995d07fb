import { readBackMismatches, recordWrittenTexts } from '@crewline/provider-testkit/fixtures';
import type { SqliteProviderOptions } from '../options.js';
import { SqliteProvider } from '../sqlite-provider.js';

/**
 * A SqliteProvider that remembers the exact text of everything it was asked to write
 * (`CheckpointWrite.text()`), so a test can prove that reading gives back the same bytes.
 */
export class RecordingProvider extends SqliteProvider {
  readonly written: Map<string, string>;

  constructor(options: SqliteProviderOptions = {}) {
    super(options);
    this.written = recordWrittenTexts(this);
  }

  /** Reads every recorded checkpoint that is still stored and returns the ids whose text differs. */
  mismatches(location: string, ids: Iterable<string> = this.written.keys()): Promise<string[]> {
    return readBackMismatches(this, location, this.written, ids);
  }
}
