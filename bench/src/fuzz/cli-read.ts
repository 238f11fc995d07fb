// The CLI's read path, run in this process: `crewline checkpoint <command> ...` through the CLI's
// one error boundary, which turns a typed error into a one-line message and anything else into an
// internal-error report with exit code 70 — the one outcome a hostile file must never produce.
import { exitCodes, runCli } from '@crewline/cli';

export interface CliRun {
  exitCode: number;
  stderr: string;
}

/** Runs the CLI with `argv` from `cwd`, its output collected. */
export async function runCliQuietly(argv: readonly string[], cwd: string): Promise<CliRun> {
  let stderr = '';
  const exitCode = await runCli(argv, {
    cwd,
    env: {},
    stdout: { write: () => true },
    stderr: {
      write: (text: string) => {
        stderr += text;
        return true;
      },
    },
  });
  return { exitCode, stderr };
}

/** True for the CLI's exit code of an unexpected error (a bug report with a stack). */
export function isInternalError(run: CliRun): boolean {
  return run.exitCode === exitCodes.internal;
}
