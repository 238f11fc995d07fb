import { existsSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import type { CheckpointSetting } from '@crewline/runtime-state';

/** Where the tutorial's checkpoints go and how they are configured on the crew. */
export interface StorageChoice {
  kind: 'json' | 'sqlite';
  /** As the user sees it (relative to the directory the command was typed in). */
  displayLocation: string;
  /** Absolute. */
  location: string;
  /** What the crew's `checkpoint` option is set to. */
  checkpoint: CheckpointSetting;
}

/** The default locations, relative to the directory the command was typed in. */
export const DEFAULT_JSON_LOCATION = '.checkpoints';
export const DEFAULT_SQLITE_LOCATION = '.checkpoints.db';

/**
 * The crew's checkpoint setting. With JSON at the default place it is literally `checkpoint: true`, as
 * in the tutorial: one JSON file per finished task in `./.checkpoints/`. SQLite needs its provider,
 * imported only when chosen so that JSON users never load better-sqlite3.
 */
export async function chooseStorage(
  kind: 'json' | 'sqlite',
  location: string | undefined,
  baseDirectory: string,
): Promise<StorageChoice> {
  const chosen = location ?? (kind === 'sqlite' ? DEFAULT_SQLITE_LOCATION : DEFAULT_JSON_LOCATION);
  const absolute = resolve(baseDirectory, chosen);
  const displayLocation = displayPath(absolute, baseDirectory);
  if (kind === 'sqlite') {
    const { SqliteProvider } = await import('@crewline/provider-sqlite');
    return {
      kind,
      displayLocation,
      location: absolute,
      checkpoint: { location: absolute, provider: new SqliteProvider() },
    };
  }
  return {
    kind,
    displayLocation,
    location: absolute,
    checkpoint: location === undefined ? true : { location: absolute },
  };
}

/** A path (or `path#id`) as typed from `baseDirectory`: `./x` inside it, absolute outside. */
export function displayPath(path: string, baseDirectory: string): string {
  const hash = path.lastIndexOf('#');
  const file = hash > 0 ? path.slice(0, hash) : path;
  const suffix = hash > 0 ? path.slice(hash) : '';
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
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(reference)) return reference;
  const hash = reference.lastIndexOf('#');
  if (hash > 0) return `${resolve(baseDirectory, reference.slice(0, hash))}${reference.slice(hash)}`;
  const path = resolve(baseDirectory, reference);
  if (existsSync(path) || reference.includes('/') || reference.includes('\\')) return path;
  return `${location}#${reference}`;
}
