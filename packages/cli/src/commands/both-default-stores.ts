import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { type LoadedCheckpoint, type ProviderRegistry, resolveReference } from '@crewline/runtime-state';
import { cliError } from '../core/cli-error.js';
import { describeKnownError } from '../core/error-boundary.js';
import { DEFAULT_LOCATIONS, displayPath, isUrl } from '../core/location.js';
import { openCheckpoint } from '../core/open-location.js';

/**
 * The default store left aside: with no location given, commands use `./.checkpoints` when it
 * exists, so a project that has `./.checkpoints.db` as well (the JSON and the SQLite demo, say)
 * never shows the second one. Undefined when a location was given or only one default exists.
 */
export function otherDefaultStore(cwd: string, location: string | undefined): string | undefined {
  if (location !== undefined && location !== '') return undefined;
  const existing = DEFAULT_LOCATIONS.map((candidate) => join(cwd, candidate)).filter((path) =>
    existsSync(path),
  );
  return existing.length > 1 ? existing[1] : undefined;
}

/** True for what `normalizeReference` looks up as an id in the default location. */
function isBareId(reference: string | undefined, cwd: string): reference is string {
  if (reference === undefined || reference === '' || isUrl(reference)) return false;
  if (reference.includes('#') || reference.includes('/') || reference.includes('\\')) return false;
  return !existsSync(resolve(cwd, reference));
}

/**
 * `openCheckpoint`, saying where else to look when a bare id is not in the default location and the
 * other default store exists too: its miss names that store when the id is there (and the
 * `--location` that reaches it), else says it was looked in as well. Nothing is opened from the
 * other store: a resume or fork writes where its checkpoint is, and that is the user's choice.
 */
export async function openCheckpointInDefaultStores(
  reference: string | undefined,
  cwd: string,
  providers: ProviderRegistry,
  location?: string,
): Promise<LoadedCheckpoint> {
  try {
    return await openCheckpoint(reference, cwd, providers, location);
  } catch (error) {
    const other = otherDefaultStore(cwd, location);
    if (other === undefined || !isBareId(reference, cwd) || !CrewlineError.hasCode(error, 'not_found'))
      throw error;
    const shown = displayPath(other, cwd);
    let found: string | undefined;
    try {
      found = (await resolveReference(`${other}#${reference}`, providers, { allowPrefix: true })).checkpoint
        .id;
    } catch {
      // Not there, or not readable there: the first store's miss is what to report.
    }
    const missed = describeKnownError(error);
    throw cliError(
      'not_found',
      found === undefined
        ? `${missed} (also looked in ${shown}: not there either)`
        : `${missed}; ${found} is in ${shown}: pass --location ${shown}`,
      { cause: error },
    );
  }
}
