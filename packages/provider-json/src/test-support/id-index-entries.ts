import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the id index of `location` says, read straight from its files: each id's entry text
 * (`<branch>/<file name>`), the last line of an id in its bucket winning, a removed one (`-`) left
 * out. Entry files of the layout before buckets (`.ids/<id>`) count when no bucket line names the id.
 */
export function indexedEntries(location: string): Map<string, string> {
  const directory = join(location, '.ids');
  const entries = new Map<string, string>();
  if (!existsSync(directory)) return entries;
  const names = readdirSync(directory);
  for (const name of names.filter((file) => file.startsWith('_'))) {
    for (const line of readFileSync(join(directory, name), 'utf8').split('\n')) {
      const space = line.indexOf(' ');
      if (space <= 0) continue;
      const id = line.slice(0, space);
      const path = line.slice(space + 1);
      if (path === '-') entries.delete(id);
      else entries.set(id, path);
    }
  }
  for (const name of names.filter((file) => !file.startsWith('_'))) {
    if (!entries.has(name)) entries.set(name, readFileSync(join(directory, name), 'utf8'));
  }
  return entries;
}

/** The ids the id index of `location` has an entry for, sorted. */
export function indexedIds(location: string): string[] {
  return [...indexedEntries(location).keys()].sort();
}
