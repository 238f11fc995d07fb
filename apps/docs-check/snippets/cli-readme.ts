// The programmatic use of packages/cli/README.md. Compiled, not run: the project directory is the reader's.
// #region programmatic
import { processContext, runCli } from '@crewline/cli';
// #endregion programmatic

export async function listCheckpointsOfProject(): Promise<number> {
  // #region programmatic

  const exitCode = await runCli(['checkpoint', 'list', '--json'], {
    ...processContext(),
    cwd: '/path/to/project',
  });
  // #endregion programmatic
  return exitCode;
}
