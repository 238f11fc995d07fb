// The checkpoints of the location the explorer shows, as its requests read them. Split from
// explorer-server.ts.
import { readDocument, type StoredCheckpoint } from '@crewline/runtime-state';
import { cliError } from '../core/cli-error.js';
import { type DocumentView, viewDocument } from '../core/document-view.js';
import type { OpenedLocation } from '../core/open-location.js';
import { findCheckpoint } from './checkpoint-lookup.js';

/**
 * One listing of the opened location shared by the requests until {@link ExplorerCheckpoints.forget}
 * (something changed, or no page listens and a request comes: explorer-server.ts) or a failed
 * listing; a checkpoint found in it by id, and the view of its document.
 */
export class ExplorerCheckpoints {
  readonly #opened: OpenedLocation;
  #listing: Promise<StoredCheckpoint[]> | undefined;

  constructor(opened: OpenedLocation) {
    this.#opened = opened;
  }

  /** The listing, taken again when none is kept. */
  list(): Promise<StoredCheckpoint[]> {
    if (!this.#listing) {
      const listing = this.#opened.provider.list(this.#opened.location);
      this.#listing = listing;
      listing.catch(() => {
        this.#listing = undefined;
      });
    }
    return this.#listing;
  }

  /** Lists again at the next request. */
  forget(): void {
    this.#listing = undefined;
  }

  // A full id or a unique short form, as the CLI takes them (what `crewline checkpoint list` prints).
  async find(id: string): Promise<StoredCheckpoint> {
    const { location } = this.#opened;
    const found = findCheckpoint(await this.list(), id, location);
    if (found) return found;
    // Written since the listing was taken: list again once.
    this.#listing = undefined;
    const again = findCheckpoint(await this.list(), id, location);
    if (!again) {
      throw cliError('not_found', `no checkpoint ${JSON.stringify(id)} in ${location}`);
    }
    return again;
  }

  /** A checkpoint by id and the view of its document. */
  async view(id: string): Promise<{ checkpoint: StoredCheckpoint; view: DocumentView }> {
    const checkpoint = await this.find(id);
    return {
      checkpoint,
      view: viewDocument(await readDocument(this.#opened.provider, this.#opened.location, checkpoint.id)),
    };
  }
}
