import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** True when a location names something on the local disk (not a URL such as `postgres://`). */
export function isPathLocation(location: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(location) && !location.includes('\0');
}

/**
 * Every file a location may have written to: all files under a directory (hidden ones included),
 * or a database file and its siblings (`-wal`, `-shm`, `-journal`...). Symbolic links are not followed.
 */
export function storageFiles(location: string): string[] {
  if (!isPathLocation(location)) return [];
  const path = resolve(location);
  const files: string[] = [];
  if (existsSync(path) && lstatSync(path).isDirectory()) {
    walk(path, files);
    return files;
  }
  const parent = dirname(path);
  if (!existsSync(parent)) return files;
  const name = basename(path);
  for (const entry of readdirSync(parent, { withFileTypes: true })) {
    if (entry.name.startsWith(name) && entry.isFile()) files.push(join(parent, entry.name));
  }
  return files;
}

function walk(directory: string, files: string[]): void {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) walk(path, files);
    else if (entry.isFile()) files.push(path);
  }
}

/** Files among `files` whose bytes contain `needle` (UTF-8). */
export function filesContaining(files: readonly string[], needle: string): string[] {
  const bytes = Buffer.from(needle, 'utf8');
  return files.filter((file) => {
    try {
      return readFileSync(file).includes(bytes);
    } catch {
      return false;
    }
  });
}

/**
 * Names of entries next to a location (in its parent directory), to prove afterwards that nothing
 * was created beside it. Empty for non-path locations.
 */
export function siblingNames(location: string): Set<string> {
  if (!isPathLocation(location)) return new Set();
  const parent = dirname(resolve(location));
  try {
    return new Set(readdirSync(parent));
  } catch {
    return new Set();
  }
}
