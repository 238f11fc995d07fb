import { CrewlineError } from '@crewline/events';
import {
  type CheckpointProvider,
  type LoadedCheckpoint,
  loadCheckpoint,
  type ProviderRegistry,
  resolveReference,
} from '@crewline/runtime-state';
import { matchShortId, missingCheckpointMessage } from '@crewline/runtime-state/internal';
import { cliError } from './cli-error.js';
import { describeKnownError } from './error-boundary.js';
import {
  displayPath,
  type NormalizedReference,
  normalizeReference,
  otherDefaultStore,
  resolveLocation,
} from './location.js';
import {
  listWithUnreadable,
  missingParentIds,
  unreadableCause,
  unreadableCheckpoint,
} from './unreadable-checkpoint.js';

export interface OpenedLocation {
  /** The name of the registry entry that claimed the location (`json`, `sqlite`, a plugin's own). */
  kind: string;
  provider: CheckpointProvider;
  /** The provider's canonical form of the location. */
  location: string;
}

/** The provider for a location argument (or the default location) and the location it stands for. */
export async function openLocation(
  value: string | undefined,
  cwd: string,
  providers: ProviderRegistry,
): Promise<OpenedLocation> {
  const path = resolveLocation(value, cwd);
  const { entry, provider } = await providers.open(path);
  const parsed = provider.parseReference(path);
  if (!parsed) {
    throw cliError(
      'not_found',
      `${value ?? path} is not a checkpoint directory or database; pass a directory, a .db file or a URL`,
    );
  }
  // A location that is not a path (a postgres:// URL) is checked by its provider: a misspelt
  // `?schema=` is "does not exist" (exit 3), as a missing directory or .db is, not an empty store.
  await provider.checkLocationExists?.(parsed.location);
  return { kind: entry.name, provider, location: parsed.location };
}

/**
 * Loads the checkpoint a user's reference names: a file, `path#id`, a directory or database (its
 * latest), a URL, or an id or unique id prefix in `location` (undefined: the default location).
 * Errors are one-line CrewlineErrors; `command` is how they name the CLI (`commandName`).
 */
export async function openCheckpoint(
  reference: string | undefined,
  cwd: string,
  providers: ProviderRegistry,
  location: string | undefined,
  command: string,
): Promise<LoadedCheckpoint> {
  const normalized = normalizeReference(reference, cwd, location);
  try {
    return await loadNormalized(normalized, cwd, providers, command);
  } catch (error) {
    const asked = normalized.idInDefaultStore;
    const other = otherDefaultStore(cwd, location);
    if (asked === undefined || other === undefined || !CrewlineError.hasCode(error, 'not_found')) throw error;
    throw await missedInDefaultStores(error, asked, other, cwd, providers);
  }
}

/**
 * A bare id missed in the first default store while the other one exists too: says where it is
 * (and the `--location` that reaches it), else that the other was looked in as well. Nothing is
 * opened from the other store: a resume or fork writes where its checkpoint is, the user's choice.
 */
async function missedInDefaultStores(
  error: CrewlineError,
  asked: string,
  other: string,
  cwd: string,
  providers: ProviderRegistry,
): Promise<CrewlineError> {
  const shown = displayPath(other, cwd);
  let found: string | undefined;
  try {
    found = (await resolveReference(`${other}#${asked}`, providers, { allowPrefix: true })).checkpoint.id;
  } catch {
    // Not there, or not readable there: the first store's miss is what to report.
  }
  const missed = describeKnownError(error);
  return cliError(
    'not_found',
    found === undefined
      ? `${missed} (also looked in ${shown}: not there either)`
      : `${missed}; ${found} is in ${shown}: pass --location ${shown}`,
    { cause: error },
  );
}

async function loadNormalized(
  normalized: NormalizedReference,
  cwd: string,
  providers: ProviderRegistry,
  command: string,
): Promise<LoadedCheckpoint> {
  try {
    return await loadCheckpoint(normalized.reference, providers, { allowPrefix: true });
  } catch (error) {
    // Not listed may still be stored: a damaged checkpoint asked for by its id is unreadable (exit
    // code 4, the cause named), not "no checkpoint" (3) under a warning that names the real cause.
    const hash = normalized.reference.lastIndexOf('#');
    if (!CrewlineError.hasCode(error, 'not_found') || normalized.location === undefined || hash < 0)
      throw error;
    const asked = normalized.reference.slice(hash + 1);
    const opened = await openLocation(normalized.location, cwd, providers);
    const where = displayPath(opened.location, cwd);
    const cause = await unreadableCause(opened.provider, opened.location, asked);
    if (cause !== undefined) throw unreadableCheckpoint(asked, where, cause);
    const listing = await listWithUnreadable(opened.provider, opened.location);
    const missing = missingInCliWords(error, asked, where, command, {
      kind: opened.kind,
      locations: [opened.location, normalized.location],
      ids: [asked, ...matchShortId(listing.checkpoints, asked).map((checkpoint) => checkpoint.id)],
    });
    // A short id (what list prints: a damaged checkpoint's row, or "7bd84df1 (unreadable)" as a
    // parent) is matched, as the lookup matches the listed ids, against the unreadable ids the listing
    // knows of: those the provider says it left out, and parents it names but does not hold.
    const unlisted = [
      ...new Set([
        ...listing.unreadable.map((checkpoint) => checkpoint.id),
        ...missingParentIds(listing.checkpoints),
      ]),
    ];
    const matches = matchShortId(
      unlisted.map((id) => ({ id })),
      asked,
    );
    if (matches.length !== 1) throw missing;
    const { id } = matches[0]!;
    const matchCause = await unreadableCause(opened.provider, opened.location, id);
    throw matchCause === undefined ? missing : unreadableCheckpoint(id, where, matchCause);
  }
}

/**
 * A checkpoint not found in `location#id`, said again in the CLI's words: the standard message (see
 * missingCheckpointMessage) names the CLI as `crewline`, which is not on the PATH where a package
 * manager ran it (`npx crewline`). A provider that said more than that standard message (a
 * third-party store's own reason: an expired object, a missing bucket) keeps its words after the
 * CLI's, with its name: they are the only clue to what happened.
 *
 * @param standard the provider's name, and the locations and ids its standard message may name
 * (the canonical location and the one asked for; the id asked for and the listed ids it matches).
 */
function missingInCliWords(
  error: CrewlineError,
  asked: string,
  where: string,
  command: string,
  standard: { kind: string; locations: readonly (string | undefined)[]; ids: readonly string[] },
): CrewlineError {
  const words = missingCheckpointMessage(asked, where, command);
  const said = describeKnownError(error);
  const plain = standard.ids.some((id) =>
    standard.locations.some(
      (location) => location !== undefined && said === missingCheckpointMessage(id, location),
    ),
  );
  return cliError('not_found', plain ? words : `${words} (the ${standard.kind} provider says: ${said})`, {
    cause: error,
  });
}
