import type { StoredCheckpoint } from '@crewline/runtime-state';
import { matchShortId } from '@crewline/runtime-state/internal';
import { cliError } from '../core/cli-error.js';

/**
 * The checkpoint of `listing` an id names, by the rule of the CLI's references: the full id, else a
 * unique short form (`matchShortId`: a prefix, or the hex part `crewline checkpoint list` shows in
 * its PARENT column). Undefined when none matches; more than one is an `ambiguous_reference` error
 * (the explorer's 409) naming the first few, as `crewline checkpoint info` does.
 */
export function findCheckpoint(
  listing: readonly StoredCheckpoint[],
  id: string,
  where: string,
): StoredCheckpoint | undefined {
  const exact = listing.find((checkpoint) => checkpoint.id === id);
  if (exact) return exact;
  const matches = matchShortId(listing, id);
  if (matches.length <= 1) return matches[0];
  throw cliError(
    'ambiguous_reference',
    `checkpoint id "${id}" matches ${matches.length} checkpoints in ${where} (${matches
      .slice(0, 3)
      .map((checkpoint) => checkpoint.id)
      .join(', ')}${matches.length > 3 ? ', ...' : ''}); give more characters`,
  );
}
