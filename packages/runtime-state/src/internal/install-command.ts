// The package manager of the project a message speaks to: the runtime's model hints and the
// provider registry's "not installed" errors both name the command that project would use.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** A package manager crewline can name in an install hint. */
export type PackageManager = 'pnpm' | 'npm' | 'yarn' | 'bun';

const addCommands: Record<PackageManager, string> = {
  pnpm: 'pnpm add',
  npm: 'npm install',
  yarn: 'yarn add',
  bun: 'bun add',
};

// Checked in this order in each directory: a project with two lockfiles is most likely moving to the
// first one listed.
const lockfiles: [string, PackageManager][] = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
  ['yarn.lock', 'yarn'],
  ['package-lock.json', 'npm'],
];

export interface DetectPackageManagerOptions {
  /** Read for `npm_config_user_agent` (set by every package manager for the scripts it runs). Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Where to start looking for a lockfile, walking up. Default `process.cwd()`. */
  cwd?: string;
}

/**
 * The package manager of the project: the one running this process (`npm_config_user_agent`), else
 * the one whose lockfile is nearest above `cwd`, else npm.
 */
export function detectPackageManager(options: DetectPackageManagerOptions = {}): PackageManager {
  const agent = (options.env ?? process.env).npm_config_user_agent ?? '';
  const name = agent.split('/')[0]?.trim();
  if (name === 'pnpm' || name === 'npm' || name === 'yarn' || name === 'bun') return name;
  let directory = resolve(options.cwd ?? process.cwd());
  for (;;) {
    for (const [file, manager] of lockfiles) if (existsSync(join(directory, file))) return manager;
    const parent = dirname(directory);
    if (parent === directory) return 'npm';
    directory = parent;
  }
}

/** The command that adds `packageName` to the project, e.g. `pnpm add @ai-sdk/anthropic`. */
export function installCommand(packageName: string, options: DetectPackageManagerOptions = {}): string {
  return `${addCommands[detectPackageManager(options)]} ${packageName}`;
}
