import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** File names looked for, in order, in the project directory. */
const PROJECT_CONFIG_FILES = [
  'crewline.config.ts',
  'crewline.config.mts',
  'crewline.config.js',
  'crewline.config.mjs',
] as const;

/**
 * The project's config file in `directory` (the first of `PROJECT_CONFIG_FILES` that exists), or
 * undefined. Only `node:` imports here, so the CLI can ask before it loads the runtime.
 */
export function findProjectConfigFile(directory: string): string | undefined {
  const base = resolve(directory);
  return PROJECT_CONFIG_FILES.map((name) => join(base, name)).find((path) => existsSync(path));
}
