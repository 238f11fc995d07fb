import {
  type CheckpointProvider,
  type LoadedCheckpoint,
  loadCheckpoint,
  type ProviderCatalog,
  type ProviderKind,
  providerForReference,
} from '@crewline/runtime-state';
import { cliError } from './cli-error.js';
import { normalizeReference, resolveLocation } from './location.js';

export interface OpenedLocation {
  kind: ProviderKind;
  provider: CheckpointProvider;
  /** The provider's canonical form of the location. */
  location: string;
}

/** The provider for a location argument (or the default location) and the location it stands for. */
export async function openLocation(
  value: string | undefined,
  cwd: string,
  catalog: ProviderCatalog,
): Promise<OpenedLocation> {
  const path = resolveLocation(value, cwd);
  const { kind, provider } = await providerForReference(path, catalog);
  const parsed = provider.parseReference(path);
  if (!parsed) {
    throw cliError(
      'not_found',
      `${value ?? path} is not a checkpoint directory or database; pass a directory, a .db file or a URL`,
    );
  }
  return { kind, provider, location: parsed.location };
}

/**
 * Loads the checkpoint a user's reference names: a file, `path#id`, a directory or database (its
 * latest), a URL, or an id or unique id prefix in `location`. Errors are one-line CrewlineErrors.
 */
export async function openCheckpoint(
  reference: string | undefined,
  cwd: string,
  catalog: ProviderCatalog,
  location?: string,
): Promise<LoadedCheckpoint> {
  const normalized = normalizeReference(reference, cwd, location);
  return loadCheckpoint(normalized.reference, catalog, { allowPrefix: true });
}
