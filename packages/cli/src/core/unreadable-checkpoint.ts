import { CrewlineError } from '@crewline/events';
import {
  type CheckpointProvider,
  type ListingWithUnreadable,
  type ListQuery,
  readDocument,
  readyProvider,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { unreadableCodes } from '@crewline/runtime-state/internal';
import { cliError } from './cli-error.js';
import { describeKnownError } from './error-boundary.js';

/**
 * Why a checkpoint a listing does not show cannot be read, when it is still stored: the error of
 * reading it by id (a file cut short, a format version newer than this crewline), or `undefined`
 * when it is gone (pruned, deleted) or reads fine. A listing leaves unreadable checkpoints out (with
 * a warning), so without this a damaged checkpoint looks like one that never existed.
 */
export async function unreadableCause(
  provider: CheckpointProvider,
  location: string,
  id: string,
): Promise<CrewlineError | undefined> {
  try {
    await readDocument(provider, location, id);
    return undefined;
  } catch (error) {
    // A server that cannot be reached says nothing about the checkpoint.
    return CrewlineError.isInstance(error) &&
      unreadableCodes.has(error.code) &&
      error.details?.unreachable !== true
      ? error
      : undefined;
  }
}

/**
 * The provider's listing and the checkpoints it leaves out because they cannot be read, when the
 * provider can say (`listWithUnreadable`); else the listing alone.
 */
export async function listWithUnreadable(
  provider: CheckpointProvider,
  location: string,
  query?: ListQuery,
): Promise<ListingWithUnreadable> {
  const ready = await readyProvider(provider);
  if (ready.listWithUnreadable) return ready.listWithUnreadable(location, query);
  return { checkpoints: await ready.list(location, query), unreadable: [] };
}

/**
 * The parents `checkpoints` name that `listing` (the whole location's) does not hold: pruned, or
 * still stored but unreadable — a listing leaves a damaged checkpoint out, yet its children still
 * name it. These are the only ids of unreadable checkpoints a listing knows (list's "(unreadable)").
 */
export function missingParentIds(
  checkpoints: readonly StoredCheckpoint[],
  listing: readonly StoredCheckpoint[] = checkpoints,
): Set<string> {
  const ids = new Set(listing.map((checkpoint) => checkpoint.id));
  return new Set(
    checkpoints.flatMap((checkpoint) =>
      checkpoint.parentId !== null && !ids.has(checkpoint.parentId) ? [checkpoint.parentId] : [],
    ),
  );
}

/**
 * The CLI's refusal of a checkpoint asked for by id that is stored but unreadable (exit code 4),
 * naming where it is stored: not every cause names its file (a format version too new does not).
 */
export function unreadableCheckpoint(id: string, where: string, cause: CrewlineError): CrewlineError {
  return cliError(cause.code, `checkpoint ${id} in ${where} is unreadable: ${describeKnownError(cause)}`, {
    cause,
  });
}
