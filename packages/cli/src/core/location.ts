import { existsSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { cliError } from './cli-error.js';

/** Where checkpoints are looked for when no location is given, in order. */
export const DEFAULT_LOCATIONS = ['.checkpoints', '.checkpoints.db'] as const;

const urlPattern = /^[a-z][a-z0-9+.-]*:\/\//i;

/** True for a connection string such as `postgres://…` rather than a path. */
export function isUrl(value: string): boolean {
  return urlPattern.test(value);
}

/**
 * The location to use when the user gave none: `./.checkpoints` if it exists, else
 * `./.checkpoints.db`. Fails with a message that says what was looked for and how to point elsewhere.
 */
export function findDefaultLocation(cwd: string): string {
  const found = existingDefaultLocation(cwd);
  if (found !== undefined) return found;
  throw cliError(
    'not_found',
    `no checkpoints found: neither ./.checkpoints nor ./.checkpoints.db exists in ${cwd}; pass --location <directory or .db file>`,
  );
}

/** The first of {@link DEFAULT_LOCATIONS} that exists in `cwd`, if any. */
function existingDefaultLocation(cwd: string): string | undefined {
  return DEFAULT_LOCATIONS.map((candidate) => join(cwd, candidate)).find((path) => existsSync(path));
}

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

/** A location argument made absolute and checked to exist; undefined means the default location. */
export function resolveLocation(value: string | undefined, cwd: string): string {
  if (value === undefined || value === '') return findDefaultLocation(cwd);
  if (isUrl(value)) return value;
  const path = resolve(cwd, value);
  if (!existsSync(path)) {
    throw cliError(
      'not_found',
      `location ${value} does not exist; check the path or pass --location <directory or .db file>`,
    );
  }
  return path;
}

export interface NormalizedReference {
  /** What to hand to `resolveReference`: absolute paths, `location#id` for bare ids. */
  reference: string;
  /** The location the reference lives in, when it is known without asking a provider. */
  location?: string;
  /** The id the user typed alone, looked up in the first default store that exists. */
  idInDefaultStore?: string;
}

/**
 * Turns what the user typed into a reference `resolveReference` understands: a file, directory or
 * database (made absolute against `cwd`), `path#id`, a connection string, or a bare id or unique id
 * prefix looked up in `location` (the `--location` option, else the default location).
 */
export function normalizeReference(
  value: string | undefined,
  cwd: string,
  location?: string,
): NormalizedReference {
  if (value === undefined || value === '') {
    const resolved = resolveLocation(location, cwd);
    return { reference: resolved, location: resolved };
  }
  if (isUrl(value)) return { reference: value };
  const hash = value.lastIndexOf('#');
  if (hash > 0) {
    const path = resolve(cwd, value.slice(0, hash));
    if (!existsSync(path)) {
      throw cliError('not_found', `${value.slice(0, hash)} does not exist; check the path before "#"`);
    }
    return { reference: `${path}#${value.slice(hash + 1)}`, location: path };
  }
  const path = resolve(cwd, value);
  if (existsSync(path)) return { reference: path };
  const looksLikePath = value.includes('/') || value.includes('\\') || /\.(?:json|db|sqlite3?)$/i.test(value);
  if (looksLikePath) {
    throw cliError(
      'not_found',
      `${value} does not exist; give a checkpoint file, a directory, a .db file or a checkpoint id`,
    );
  }
  if (location === undefined || location === '') {
    // A bare word is a checkpoint id only when there is a location to look it up in; say so with
    // the argument, rather than a generic "no checkpoints found".
    const found = existingDefaultLocation(cwd);
    if (found === undefined) {
      throw cliError(
        'not_found',
        `"${value}" is not a file or directory, and there is no ./.checkpoints or ./.checkpoints.db in ${cwd} to look it up in as a checkpoint id; check the path, or pass --location <directory or .db file>`,
      );
    }
    return { reference: `${found}#${value}`, location: found, idInDefaultStore: value };
  }
  const base = resolveLocation(location, cwd);
  return { reference: `${base}#${value}`, location: base };
}

/** A path shown relative to `cwd` when it lies inside it (shorter lines), else as is. */
export function displayPath(path: string, cwd: string): string {
  if (isUrl(path)) return redactUrl(path);
  const hash = path.lastIndexOf('#');
  const file = hash > 0 ? path.slice(0, hash) : path;
  const suffix = hash > 0 ? path.slice(hash) : '';
  if (!isAbsolute(file)) return path;
  const inside = relative(cwd, file);
  if (inside === '') return `.${suffix}`;
  if (inside.startsWith('..') || isAbsolute(inside)) return path;
  return `./${inside}${suffix}`;
}

/** A connection string with its password hidden, for messages and listings. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]+):[^@/]*@/i, '$1:***@');
}
