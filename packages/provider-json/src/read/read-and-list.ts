import type {
  ListingWithUnreadable,
  ListQuery,
  RawCheckpoint,
  StoredCheckpoint,
} from '@crewline/runtime-state';
import { missingCheckpointMessage } from '@crewline/runtime-state/internal';
import { jsonError } from '../errors.js';
import { assertCheckpointId } from '../file-names.js';
import { mapLimited } from '../map-limited.js';
import type { ResolvedJsonProviderOptions } from '../options.js';
import { resolveRoot } from '../paths.js';
import { readCheckpointText } from './checkpoint-read.js';
import { refuseLinks } from './directory-walk.js';
import type { LocationReader } from './location-reader.js';

// The reads of JsonProvider (read, listWithUnreadable, latest): the files of a location found and
// described by its LocationReader (location-reader.ts), a standalone checkpoint file as a location
// of one checkpoint.

/** Files whose heads are read at once while listing (keeps file handles bounded for big locations). */
const listConcurrency = 16;

/** What reading needs of the provider. */
export interface ReadContext {
  options: Readonly<ResolvedJsonProviderOptions>;
  reader: LocationReader;
}

/** `JsonProvider.read`: the text of one checkpoint, `not_found` when no file holds its id. */
export async function readCheckpoint(
  context: ReadContext,
  location: string,
  id: string,
): Promise<RawCheckpoint> {
  const root = resolveRoot(location);
  assertCheckpointId(id);
  const path = await context.reader.pathOf(root, id);
  if (path === undefined) throw jsonError('not_found', missingCheckpointMessage(id, root));
  return { text: await readCheckpointText(root, path, id, context.options.maxCheckpointBytes) };
}

/** `JsonProvider.listWithUnreadable`: the checkpoints a query matches, and the files that could not be read. */
export async function listLocation(
  { reader }: ReadContext,
  location: string,
  query: ListQuery,
): Promise<ListingWithUnreadable> {
  const root = resolveRoot(location);
  const standalone = await reader.standalone(root, query);
  if (standalone !== undefined) return { checkpoints: standalone, unreadable: [] };
  const found = refuseLinks(root, await reader.walk(root, query.branch));
  const examined = await mapLimited(found, listConcurrency, (entry) => reader.examine(entry));
  const listing: ListingWithUnreadable = { checkpoints: [], unreadable: [] };
  for (const entry of examined) {
    if (entry === undefined) continue;
    if ('unreadable' in entry) {
      // A damaged file's run is unknown: it belongs to no run a query names.
      if (query.lineageId === undefined) listing.unreadable.push(entry.unreadable);
    } else if (query.lineageId === undefined || entry.stored.lineageId === query.lineageId) {
      listing.checkpoints.push(entry.stored);
    }
  }
  return listing;
}

/** `JsonProvider.latest`: the newest checkpoint a query matches. */
export async function latestCheckpoint(
  { reader }: ReadContext,
  location: string,
  query: ListQuery,
): Promise<StoredCheckpoint | undefined> {
  const root = resolveRoot(location);
  const standalone = await reader.standalone(root, query);
  if (standalone !== undefined) return standalone[0];
  const found = refuseLinks(root, await reader.walk(root, query.branch));
  // Newest first, reading heads only until one matches: the latest of 10,000 reads one file.
  for (let index = found.length - 1; index >= 0; index -= 1) {
    const entry = await reader.describe(found[index]!);
    if (entry && (query.lineageId === undefined || entry.lineageId === query.lineageId)) return entry;
  }
  return undefined;
}
