// The checkpoints of the location the explorer shows, as its requests read them. Split from
// explorer-server.ts.
import { CrewlineError } from '@crewline/events';
import { type CheckpointDocument, readDocument, type StoredCheckpoint } from '@crewline/runtime-state';
import { cliError } from '../core/cli-error.js';
import { type DocumentView, viewDocument } from '../core/document-view.js';
import type { OpenedLocation } from '../core/open-location.js';
import { findCheckpoint } from './checkpoint-lookup.js';

/** A listing of the whole location, and when it started on the clock of {@link ExplorerCheckpoints}. */
interface Listing {
  readonly checkpoints: Promise<StoredCheckpoint[]>;
  readonly started: number;
}

/** What one request reads the checkpoints through (see {@link ExplorerCheckpoints.reader}). */
export interface CheckpointReader {
  /** The listing of the whole location. */
  list(): Promise<StoredCheckpoint[]>;
  /** A checkpoint by its full id or a unique short form, as the CLI takes them. */
  find(id: string): Promise<StoredCheckpoint>;
  /** A checkpoint by id and the view of its document. */
  view(id: string): Promise<{ checkpoint: StoredCheckpoint; view: DocumentView }>;
}

/**
 * An id as the runtime makes them (`20261121T093000123-3f9a2b1c`): whole, so no other generated id
 * starts with it, and a short form is never this long. Such an id is read directly; any other string
 * is looked up in a listing, where short forms are matched.
 */
const completeId = /^\d{8}T\d{9}-[0-9a-f]{8}$/;

/**
 * The listing of the opened location shared by the requests, and lookups by id.
 *
 * A request that must see the store as it is when it comes (no page listens, so nothing watches the
 * location: explorer-server.ts) takes a reader with `fresh`: its listing is one that started after
 * the request arrived, taken then or shared with the requests that arrived before it started. It
 * never waits for a listing it cannot use, and never drops one that other requests await. A request
 * for one checkpoint by its complete id reads that checkpoint alone, without listing the location: a
 * script that reads checkpoints one by one pays one read each, not a listing of the whole store.
 */
export class ExplorerCheckpoints {
  readonly #opened: OpenedLocation;
  /** Counts listings started; a request's arrival is the count at that moment. */
  #clock = 0;
  #kept: Listing | undefined;

  constructor(opened: OpenedLocation) {
    this.#opened = opened;
  }

  /**
   * The reader of a request arriving now. With `fresh`, what it reads was stored when the request
   * came; without, it reads the kept listing (current while a page listens and its watch calls
   * {@link forget} on a change).
   */
  reader(fresh: boolean): CheckpointReader {
    const arrival = fresh ? this.#clock : undefined;
    return {
      list: async () => this.#listing(arrival).checkpoints,
      find: async (id) => (await this.#lookUp(id, arrival)).checkpoint,
      view: async (id) => {
        const { checkpoint, document } = await this.#lookUp(id, arrival);
        const read =
          document ?? (await readDocument(this.#opened.provider, this.#opened.location, checkpoint.id));
        return { checkpoint, view: viewDocument(read) };
      },
    };
  }

  /** A checkpoint by id from the kept listing (a run started by the explorer names its own). */
  find(id: string): Promise<StoredCheckpoint> {
    return this.reader(false).find(id);
  }

  /**
   * The next request lists again. A listing in flight still answers the requests that await it:
   * they arrived before the change that calls this.
   */
  forget(): void {
    this.#kept = undefined;
  }

  /** The kept listing when it started after `after` (any kept one without), else a new one. */
  #listing(after: number | undefined): Listing {
    const kept = this.#kept;
    if (kept && (after === undefined || kept.started > after)) return kept;
    this.#clock += 1;
    const listing: Listing = {
      checkpoints: this.#opened.provider.list(this.#opened.location),
      started: this.#clock,
    };
    this.#kept = listing;
    listing.checkpoints.catch(() => {
      // A failed listing is not kept: the next request tries again.
      if (this.#kept === listing) this.#kept = undefined;
    });
    return listing;
  }

  async #lookUp(
    id: string,
    arrival: number | undefined,
  ): Promise<{ checkpoint: StoredCheckpoint; document?: CheckpointDocument }> {
    const { location } = this.#opened;
    const kept = this.#kept;
    const usable = kept && (arrival === undefined || kept.started > arrival);
    if (!usable && completeId.test(id)) return this.#readDirectly(id);
    const listing = this.#listing(arrival);
    const found = findCheckpoint(await listing.checkpoints, id, location);
    if (found) return { checkpoint: found };
    // Written since that listing started: one that started after it (shared, or taken now).
    const again = findCheckpoint(await this.#listing(listing.started).checkpoints, id, location);
    if (!again) throw notFound(id, location);
    return { checkpoint: again };
  }

  /**
   * A checkpoint read by its complete id, with its listing entry from its own run's listing (the
   * reference and size a provider gives only there), not the whole location's.
   */
  async #readDirectly(id: string): Promise<{ checkpoint: StoredCheckpoint; document: CheckpointDocument }> {
    const { provider, location } = this.#opened;
    let document: CheckpointDocument;
    try {
      document = await readDocument(provider, location, id);
    } catch (error) {
      if (CrewlineError.hasCode(error, 'not_found')) throw notFound(id, location);
      throw error;
    }
    const run = await provider.list(location, { lineageId: document.metadata.lineageId });
    const checkpoint = run.find((stored) => stored.id === id);
    // Deleted between the two reads.
    if (!checkpoint) throw notFound(id, location);
    return { checkpoint, document };
  }
}

function notFound(id: string, location: string): Error {
  return cliError('not_found', `no checkpoint ${JSON.stringify(id)} in ${location}`);
}
