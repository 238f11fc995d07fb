import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { CrewlineError, type CrewlineErrorCode } from '@crewline/events';
import { type CheckpointDocument, validateDocument, validateParsedDocument } from './document.js';
import { DEFAULT_MAX_CHECKPOINT_BYTES, parseCheckpointJson } from './document-text.js';
import { stateError } from './errors.js';
import { missingCheckpointMessage } from './internal/missing-checkpoint.js';
import { unreadableCodes } from './internal/unreadable-codes.js';
import { readyProvider } from './lazy-provider.js';
import type { CheckpointProvider, StoredCheckpoint } from './provider.js';
import type { ProviderRegistry } from './provider-registry.js';

export interface ResolveOptions {
  /** Accept a unique prefix of a checkpoint id (CLI convenience). Default false. */
  allowPrefix?: boolean;
  /** Location to search when the reference is a bare id or prefix. */
  defaultLocation?: string;
  /** Restrict "latest" to a branch. */
  branch?: string;
}

export interface ResolvedReference {
  provider: CheckpointProvider;
  /** The registry the reference was resolved through (a restore rebuilds stored providers from it). */
  providers: ProviderRegistry;
  location: string;
  checkpoint: StoredCheckpoint;
}

/**
 * The entries a short form of a checkpoint id names: those whose id starts with it, or else (for 4
 * or more hex digits) those whose random part after the time starts with it — what people copy from
 * a listing: "3f9a2b1c". More than one match means the short form is ambiguous.
 */
export function matchShortId<Entry extends { id: string }>(
  entries: readonly Entry[],
  shortId: string,
): Entry[] {
  const prefixed = entries.filter((entry) => entry.id.startsWith(shortId));
  if (prefixed.length > 0 || !/^[0-9a-f]{4,}$/.test(shortId)) return prefixed;
  return entries.filter((entry) => entry.id.slice(entry.id.lastIndexOf('-') + 1).startsWith(shortId));
}

function pathExists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The checkpoints of a location, to find one by id: through `listWithUnreadable` when the provider
 * has it, so that a damaged checkpoint the lookup is not about is not logged as skipped (a command
 * asked for another one; the caller that finds nothing asks what is unreadable itself).
 */
async function listQuietly(provider: CheckpointProvider, location: string): Promise<StoredCheckpoint[]> {
  const ready = await readyProvider(provider);
  return ready.listWithUnreadable
    ? (await ready.listWithUnreadable(location)).checkpoints
    : ready.list(location);
}

/**
 * The refusal of the latest checkpoint of a location (or branch) that holds checkpoints none of
 * which can be read: "no checkpoints ... run something first" would hide the damaged files a listing
 * shows. `undefined` when nothing there is unreadable, or the provider cannot say
 * (no `listWithUnreadable`). The code is the newest one's own (a format too new is no corruption).
 */
async function onlyUnreadable(
  provider: CheckpointProvider,
  location: string,
  branch: string | undefined,
): Promise<CrewlineError | undefined> {
  const ready = await readyProvider(provider);
  if (ready.listWithUnreadable === undefined) return undefined;
  const unreadable = (await ready.listWithUnreadable(location)).unreadable.filter(
    (checkpoint) => branch === undefined || checkpoint.branch === branch,
  );
  const newest = unreadable.at(-1);
  if (newest === undefined) return undefined;
  let code: CrewlineErrorCode = 'corrupt_checkpoint';
  try {
    await readDocument(provider, location, newest.id);
  } catch (error) {
    // A server that cannot be reached says nothing of the checkpoint: the listing's word stands.
    if (
      CrewlineError.isInstance(error) &&
      unreadableCodes.has(error.code) &&
      error.details?.unreachable !== true
    )
      code = error.code;
  }
  const where = branch === undefined ? location : `branch "${branch}" of ${location}`;
  return stateError(
    code,
    `no readable checkpoint in ${where}: ${unreadable.length === 1 ? '1 checkpoint' : `${unreadable.length} checkpoints`} there cannot be read (the newest, ${newest.id}: ${newest.reason}); see them with \`crewline checkpoint list ${location}\`, and restore a damaged one from a backup or remove it`,
  );
}

/** The refusal of a reference to a file, directory or database path that does not exist. */
function missingPath(reference: string): CrewlineError {
  return stateError(
    'not_found',
    `"${reference}" does not exist; check the path (a checkpoint file, a directory of them or a .db file)`,
  );
}

/**
 * Resolves a checkpoint reference — a JSON file, `db-path#id`, `postgres-url#id`, a directory or
 * database meaning its latest checkpoint, any form a registered provider claims, or (with
 * `defaultLocation`) a bare id or unique id prefix. The provider is the registry entry that claims
 * the reference.
 */
export async function resolveReference(
  reference: string,
  providers: ProviderRegistry,
  options: ResolveOptions = {},
): Promise<ResolvedReference> {
  const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(reference);
  const looksLikeId =
    !isUrl && !reference.includes('#') && !reference.includes('/') && !pathExists(reference);
  if (looksLikeId && options.defaultLocation !== undefined) {
    return resolveReference(`${options.defaultLocation}#${reference}`, providers, {
      ...options,
      defaultLocation: undefined,
    });
  }
  let effective = reference;
  let wantedId: string | undefined;
  // `dir#id` for a JSON directory: split ourselves, providers only know their own reference forms.
  const hash = reference.lastIndexOf('#');
  if (
    !isUrl &&
    hash > 0 &&
    pathExists(reference.slice(0, hash)) &&
    statSync(reference.slice(0, hash)).isDirectory()
  ) {
    effective = reference.slice(0, hash);
    wantedId = reference.slice(hash + 1);
  }
  const { provider } = await providers.open(effective);
  const parsed = provider.parseReference(effective);
  if (!parsed) {
    if (!isUrl && !pathExists(effective)) throw missingPath(reference);
    throw stateError(
      'not_found',
      `"${reference}" is not a checkpoint, directory or database; check the path`,
    );
  }
  const location = parsed.location;
  const id = wantedId ?? parsed.id;
  if (id === undefined || id === '') {
    const latest = await provider.latest(location, options.branch ? { branch: options.branch } : undefined);
    if (!latest) {
      // A file location (a directory or database path) that is not there is a wrong path, not an
      // empty store: providers that keep locations elsewhere (memory, servers) name them otherwise.
      if (!isUrl && isAbsolute(location) && !pathExists(location)) throw missingPath(reference);
      throw (
        (await onlyUnreadable(provider, location, options.branch)) ??
        stateError(
          'not_found',
          `no checkpoints in ${location}; run something with checkpointing enabled first`,
        )
      );
    }
    return { provider, providers, location, checkpoint: latest };
  }
  // A file reference comes with its checkpoint already read: one file, not a listing of them all.
  if (wantedId === undefined && parsed.checkpoint?.id === id) {
    return { provider, providers, location, checkpoint: parsed.checkpoint };
  }
  const all = await listQuietly(provider, location);
  const exact = all.find((entry) => entry.id === id);
  if (exact) return { provider, providers, location, checkpoint: exact };
  const shortForms = options.allowPrefix || wantedId !== undefined;
  const matches = shortForms ? matchShortId(all, id) : [];
  if (matches.length === 1) return { provider, providers, location, checkpoint: matches[0]! };
  if (matches.length > 1) {
    throw stateError(
      'ambiguous_reference',
      `checkpoint id "${id}" matches ${matches.length} checkpoints in ${location} (${matches
        .slice(0, 3)
        .map((entry) => entry.id)
        .join(', ')}${matches.length > 3 ? ', ...' : ''}); give more characters`,
    );
  }
  throw stateError('not_found', missingCheckpointMessage(id, location));
}

export interface ReadOptions {
  maxBytes?: number;
}

/**
 * Reads, validates and upgrades one checkpoint document from a provider (through its `readParsed`
 * when it has one).
 */
export async function readDocument(
  provider: CheckpointProvider,
  location: string,
  id: string,
  options: ReadOptions = {},
): Promise<CheckpointDocument> {
  const origin = `${location}#${id}`;
  // A provider still to be imported (a `LazyProvider`) is asked through the real one.
  const reader = await readyProvider(provider);
  if (reader.readParsed !== undefined) {
    const { document, eventLines } = await reader.readParsed(location, id, {
      maxBytes: options.maxBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES,
    });
    // Whatever the provider says it parsed, every value is checked to be JSON (event lines it did not
    // parse are parsed and checked when first read).
    return validateParsedDocument(document, { jsonValues: true, origin: ` (${origin})`, eventLines });
  }
  const raw = await reader.read(location, id);
  if (!('text' in raw)) return validateDocument(raw.document);
  // One walk of the parsed text, in the validation (depth, `__proto__` keys); JSON.parse made every value JSON.
  const parsed = parseCheckpointJson(raw.text, { maxBytes: options.maxBytes, origin });
  return validateParsedDocument(parsed, { jsonValues: false, origin: ` (${origin})` });
}

export interface LoadedCheckpoint extends ResolvedReference {
  document: CheckpointDocument;
}

/** Resolves a reference and reads its document. */
export async function loadCheckpoint(
  reference: string,
  providers: ProviderRegistry,
  options: ResolveOptions & ReadOptions = {},
): Promise<LoadedCheckpoint> {
  const resolved = await resolveReference(reference, providers, options);
  const document = await readDocument(resolved.provider, resolved.location, resolved.checkpoint.id, options);
  return { ...resolved, document };
}
