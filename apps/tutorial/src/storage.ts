import { existsSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { CrewlineError, redactSecretsInText } from '@crewline/events';
import type { CheckpointSetting, ProviderRegistry } from '@crewline/runtime-state';
import { tutorialProviders } from './checkpoint-store.js';

/** Where the tutorial's checkpoints go and how they are configured on the crew. */
export interface StorageChoice {
  /**
   * The provider that stores them: the name of the registry entry that claims the location (`json`,
   * `sqlite`, `postgres`), so what the demo prints is what the runtime uses.
   */
  kind: string;
  /** As the user sees it (relative to the directory the command was typed in), never with a password. */
  displayLocation: string;
  /** Absolute path, or the provider's canonical form of a URL (without its password). */
  location: string;
  /** What the crew's `checkpoint` option is set to. */
  checkpoint: CheckpointSetting;
}

/** The default locations, relative to the directory the command was typed in. */
export const DEFAULT_JSON_LOCATION = '.checkpoints';
export const DEFAULT_SQLITE_LOCATION = '.checkpoints.db';

const urlPattern = /^[a-z][a-z0-9+.-]*:\/\//i;

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function storageError(message: string): CrewlineError {
  return new CrewlineError('tutorial', 'invalid_argument', `${message}; run \`pnpm demo --help\``);
}

/**
 * The crew's checkpoint setting. With JSON at the default place it is literally `checkpoint: true`, as
 * in the tutorial: one JSON file per finished task in `./.checkpoints/`. SQLite needs its provider,
 * imported only when chosen so that JSON users never load better-sqlite3.
 *
 * A `location` picks its provider the way the runtime and the CLI do (the registry entry that claims
 * it: a directory is JSON, a `.db` file SQLite, a `postgres://` URL Postgres), and that provider is
 * set on the crew, so the kind printed is the kind used. `--sqlite` (`requested`) still makes a new
 * file of any name a SQLite database, and is refused for a location that cannot be one.
 */
export async function chooseStorage(
  requested: 'json' | 'sqlite',
  location: string | undefined,
  baseDirectory: string,
  providers: ProviderRegistry = tutorialProviders,
): Promise<StorageChoice> {
  if (location === undefined) {
    const absolute = resolve(
      baseDirectory,
      requested === 'sqlite' ? DEFAULT_SQLITE_LOCATION : DEFAULT_JSON_LOCATION,
    );
    const displayLocation = displayPath(absolute, baseDirectory);
    if (requested === 'json') return { kind: 'json', displayLocation, location: absolute, checkpoint: true };
    const provider = await providers.load('sqlite');
    return {
      kind: 'sqlite',
      displayLocation,
      location: absolute,
      // The registry goes with its provider: the runtime closes it before Ctrl+C ends the process,
      // so SQLite copies its WAL back and the .db file alone holds every checkpoint.
      checkpoint: { location: absolute, provider, providers },
    };
  }
  const target = urlPattern.test(location) ? location : resolve(baseDirectory, location);
  const shown = displayPath(target, baseDirectory);
  const entry = providers.entryFor(target);
  let kind = entry?.name;
  if (requested === 'sqlite' && kind !== 'sqlite') {
    // A new file whose name says nothing (JSON claims any path) is made a database, as asked.
    if (kind !== 'json' || isDirectory(target)) {
      const what =
        kind === 'json'
          ? 'a directory (JSON checkpoints)'
          : `a ${kind ?? 'URL no provider handles'} location`;
      throw storageError(
        `--location ${shown} is ${what}, not a SQLite database, but --sqlite (or CREWLINE_STORAGE=sqlite) asks for SQLite; drop --sqlite to use it, or pass a .db file`,
      );
    }
    kind = 'sqlite';
  }
  if (kind === undefined) {
    throw storageError(
      `--location ${shown} is not a location any checkpoint provider handles; pass a directory, a .db file or a postgres:// URL`,
    );
  }
  // Loading may reject with `provider_unavailable`, naming the package to install.
  const provider = await providers.load(kind);
  // The canonical form: for Postgres the URL without its password, which the provider keeps in memory.
  const canonical = provider.resolveLocation(target);
  return {
    kind,
    displayLocation: displayPath(canonical, baseDirectory),
    location: canonical,
    checkpoint: { location: canonical, provider, providers },
  };
}

/** A path (or `path#id`) as typed from `baseDirectory`: `./x` inside it, absolute outside. */
export function displayPath(path: string, baseDirectory: string): string {
  const hash = path.lastIndexOf('#');
  const file = hash > 0 ? path.slice(0, hash) : path;
  const suffix = hash > 0 ? path.slice(hash) : '';
  // A connection string is shown with its password masked, as every crewline message shows one.
  if (urlPattern.test(path)) return redactSecretsInText(path);
  if (!isAbsolute(file)) return path;
  const inside = relative(baseDirectory, file);
  if (inside === '') return `.${suffix}`;
  if (inside.startsWith('..') || isAbsolute(inside)) return `${file}${suffix}`;
  return `./${inside}${suffix}`;
}

/** A word quoted for a POSIX shell when it needs it. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./#-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A checkpoint reference as typed, made absolute against the directory it was typed in: a file or
 * directory, `database#id`, or a bare checkpoint id (or unique prefix) looked up in `location`.
 */
export function resolveReferenceInput(reference: string, baseDirectory: string, location: string): string {
  if (urlPattern.test(reference)) return reference;
  const hash = reference.lastIndexOf('#');
  if (hash > 0) return `${resolve(baseDirectory, reference.slice(0, hash))}${reference.slice(hash)}`;
  const path = resolve(baseDirectory, reference);
  if (existsSync(path) || reference.includes('/') || reference.includes('\\')) return path;
  return `${location}#${reference}`;
}
