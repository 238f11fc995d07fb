import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { isSameCheckpoint, storedIdConflict } from '@crewline/runtime-state/internal';
import { component, jsonError } from '../errors.js';
import type { IdIndexEntry } from '../id-index/id-index.js';
import type { IdIndexKeeper } from '../id-index/id-index-keeper.js';
import { existingBranchDirectorySync } from '../paths.js';
import { readMetadataSync } from '../read/checkpoint-file.js';
import { storedFile } from '../read/file-reference.js';
import type { WritePlan } from './write-plan.js';

/**
 * A checkpoint under an id a location already holds is refused, as SQLite and Postgres refuse it: a
 * file name carries its parent, so a second checkpoint under one id with another parent was a second
 * file, and an id meant two checkpoints. What is stored is asked of the id index (an entry of this
 * provider's own, or a line of the id's bucket: see IdIndexKeeper.entryOf), never of a scan, and the
 * file it names is checked to be there (a file removed by hand frees its id).
 *
 * The index is written after each rename, so a checkpoint whose entry a crash lost, or that another
 * process stored a moment ago, is not seen. Ids are unique by construction (time and random bits);
 * two processes continue one lineage only when one of them holds its lock, and the holder's entries
 * are written before it releases it.
 */

/** The path of the file `root` holds under the id of `entry` (what the id index says), if it is there. */
function storedPathOf(root: string, entry: IdIndexEntry | undefined): string | undefined {
  if (entry === undefined) return undefined;
  try {
    const directory = existingBranchDirectorySync(root, entry.branch);
    if (directory === undefined) return undefined;
    const path = join(directory, entry.fileName);
    return lstatSync(path, { throwIfNoEntry: false })?.isFile() ? path : undefined;
  } catch {
    // A link where the entry points: not a checkpoint of this location (reads refuse it too).
    return undefined;
  }
}

/**
 * Before a single write: undefined when the id of `plan` is free; the stored checkpoint when it is
 * this very one (a retried write whose first attempt was stored: it is not written again); a
 * `conflict` naming the id in `details.duplicateId` when the id holds another checkpoint (or a file
 * that cannot be read).
 */
export function storedUnderId(
  root: string,
  index: IdIndexKeeper,
  plan: WritePlan,
  maxCheckpointBytes: number,
): StoredCheckpoint | undefined {
  const { metadata } = plan;
  const path = storedPathOf(root, index.entryOf(root, metadata.id));
  if (path === undefined) return undefined;
  let stored: StoredCheckpoint | undefined;
  try {
    const held = readMetadataSync(path, maxCheckpointBytes);
    if (held.metadata.id === metadata.id) stored = storedFile(held.metadata, path, held.size);
  } catch {
    stored = undefined;
  }
  if (stored !== undefined && isSameCheckpoint(stored, metadata)) return stored;
  throw storedIdConflict(component, metadata.id, root);
}

/**
 * Before a group is written: a `conflict` naming the id in `details.duplicateId` when an id of the
 * group is already stored (even the very same checkpoint, as SQLite and Postgres refuse it in a
 * group: the runtime then writes the group one by one with `write`, which accepts it) or appears
 * twice in it. Nothing of the group is written then.
 */
export function assertGroupNotStored(root: string, index: IdIndexKeeper, plans: readonly WritePlan[]): void {
  const ids = new Set<string>();
  const refused = (id: string, why: string) =>
    jsonError(
      'conflict',
      `checkpoint "${id}" ${why}, so none of the group of ${plans.length} was written in ${root}; write its checkpoints one by one with write(), which accepts a checkpoint stored before`,
      { details: { duplicateId: id } },
    );
  for (const { metadata } of plans) {
    if (ids.has(metadata.id)) throw refused(metadata.id, 'appears twice in the group');
    ids.add(metadata.id);
  }
  const entries = index.entriesOf(
    root,
    plans.map((plan) => plan.metadata.id),
  );
  for (const [position, entry] of entries.entries()) {
    if (storedPathOf(root, entry) !== undefined)
      throw refused(plans[position]!.metadata.id, 'is already stored');
  }
}
