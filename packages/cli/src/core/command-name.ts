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
 * - none (on the PATH, `node …/bin.js`) → `crewline`.
 */
export function commandName(env: Readonly<Record<string, string | undefined>>): string {
  const manager = /^(pnpm|yarn|bun|npm)\//.exec(env.npm_config_user_agent ?? '')?.[1];
  switch (manager) {
    case 'pnpm':
      return 'pnpm crewline';
    case 'yarn':
      return 'yarn crewline';
    case 'bun':
      return 'bunx crewline';
    case 'npm':
      return env.npm_lifecycle_event === 'crewline' ? 'npm run crewline --' : 'npx crewline';
    default:
      return 'crewline';
  }
}
