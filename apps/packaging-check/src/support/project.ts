import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CommandResult, type RunningCommand, run, runOrThrow, start } from './commands.js';

/**
 * The environment of a command run as a user would run it: without what pnpm and turbo put there for
 * this workspace (`npm_config_*` from the workspace's .npmrc, `npm_package_*`, the pnpm store), which
 * would make npm in the user's project behave as it never does for them.
 */
export function userEnvironment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|pnpm_|turbo_|vitest|node_options$)/i.test(key)) continue;
    environment[key] = value;
  }
  return { ...environment, NO_COLOR: '1', ...extra };
}

/** A user's project in a directory outside the workspace. */
export class UserProject {
  constructor(
    readonly directory: string,
    readonly npmCache: string,
    /** Where its installed binaries are: its own node_modules/.bin, or its parent project's. */
    readonly binaries: string = join(directory, 'node_modules', '.bin'),
  ) {}

  static async create(parent: string, name: string, npmCache: string): Promise<UserProject> {
    const directory = join(parent, name);
    await mkdir(directory, { recursive: true });
    await writeFile(
      join(directory, 'package.json'),
      `${JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
    );
    return new UserProject(directory, npmCache);
  }

  /** `npm install` of tarballs (and registry packages they need), with a cache of our own. */
  install(specs: readonly string[]): Promise<CommandResult> {
    return runOrThrow(
      'npm',
      [
        'install',
        '--cache',
        this.npmCache,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        ...specs,
      ],
      { cwd: this.directory, env: userEnvironment(), timeoutMs: 240_000 },
    );
  }

  /**
   * A directory of this project with a project of its own in it (a `crewline.config.ts`), that uses
   * the packages and binaries installed here, as a subdirectory of a user's repository does.
   */
  async subproject(name: string): Promise<UserProject> {
    const directory = join(this.directory, name);
    await mkdir(directory, { recursive: true });
    return new UserProject(directory, this.npmCache, this.binaries);
  }

  write(file: string, text: string): Promise<void> {
    return writeFile(join(this.directory, file), text);
  }

  /** Runs an installed binary (`node_modules/.bin/<name>`), with `env` added to the user's environment. */
  bin(name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CommandResult> {
    return run(join(this.binaries, name), args, {
      cwd: this.directory,
      env: userEnvironment(env),
    });
  }

  /** Starts an installed binary that keeps running (a server, a worker); stop it with `stop()`. */
  startBin(name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): RunningCommand {
    return start(join(this.binaries, name), args, {
      cwd: this.directory,
      env: userEnvironment(env),
    });
  }

  node(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CommandResult> {
    return run(process.execPath, args, { cwd: this.directory, env: userEnvironment(env) });
  }

  /** `du -sh node_modules`, e.g. "41M". */
  async installSize(): Promise<string> {
    const result = await runOrThrow('du', ['-sh', 'node_modules'], { cwd: this.directory });
    return result.stdout.split('\t')[0]!.trim();
  }
}
