import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * How a hint names the CLI, so that the command it prints runs where the user typed theirs: run by a
 * package manager, `crewline` is not on the PATH (a project's bin, a workspace's script), and a
 * pasted `crewline checkpoint resume …` said "command not found". Read from what the package manager
 * sets in the environment of what it runs:
 *
 * - pnpm (`pnpm crewline`, a script or the bin by name) → `pnpm crewline`; yarn → `yarn crewline`;
 *   bun → `bunx crewline`;
 * - npm: a package script named `crewline` → `npm run crewline --` (npm would read `--location` as
 *   its own option), otherwise (`npx crewline`, `npm exec`, another script) → `npx crewline`;
 * - none (on the PATH, `node …/bin.js`) → `crewline`;
 * - a manager, but no `crewline` script and no crewline installed in the project: `npx @crewline/cli`
 *   after npm exec (what ran it), else `crewline` — `npx crewline` there would fetch an unrelated
 *   package of that name.
 */
export function commandName(env: Readonly<Record<string, string | undefined>>, cwd: string): string {
  const manager = /^(pnpm|yarn|bun|npm)\//.exec(env.npm_config_user_agent ?? '')?.[1];
  if (manager === undefined) return 'crewline';
  // A package script named crewline runs through the manager; otherwise only a crewline installed in
  // this project does: `npx crewline` where none is installed fetches another package of that name
  // from the registry (review: a hint after `npx @crewline/cli …` did).
  const script = env.npm_lifecycle_event === 'crewline';
  if (!script && !installedAbove(cwd)) {
    // `npx @crewline/cli …` (npm exec of a package the project does not have): the same again works.
    return manager === 'npm' && env.npm_command === 'exec' ? 'npx @crewline/cli' : 'crewline';
  }
  switch (manager) {
    case 'pnpm':
      return 'pnpm crewline';
    case 'yarn':
      return 'yarn crewline';
    case 'bun':
      return script ? 'bun run crewline' : 'bunx crewline';
    default:
      return script ? 'npm run crewline --' : 'npx crewline';
  }
}

/**
 * Whether a project at `cwd` or above has crewline's bin (`node_modules/.bin/crewline`), or is a Yarn
 * Plug'n'Play project (`.pnp.cjs`: no node_modules, and `yarn crewline` is how its bins run) whose
 * package.json, from `cwd` up to that root, lists `@crewline/cli` (not `yarn dlx @crewline/cli` there).
 */
function installedAbove(cwd: string): boolean {
  let declared = false;
  for (let directory = resolve(cwd); ; directory = dirname(directory)) {
    if (existsSync(join(directory, 'node_modules', '.bin', 'crewline'))) return true;
    declared ||= declaresCli(join(directory, 'package.json'));
    if (existsSync(join(directory, '.pnp.cjs'))) return declared;
    if (dirname(directory) === directory) return false;
  }
}

/** Whether the package.json at `path` lists @crewline/cli among its dependencies. */
function declaresCli(path: string): boolean {
  try {
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    return ['dependencies', 'devDependencies', 'optionalDependencies'].some(
      (field) =>
        typeof manifest[field] === 'object' &&
        manifest[field] !== null &&
        '@crewline/cli' in (manifest[field] as object),
    );
  } catch {
    return false;
  }
}
