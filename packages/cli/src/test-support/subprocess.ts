import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** `src/bin.ts` of this package. */
export const binSource = fileURLToPath(new URL('../bin.ts', import.meta.url));
/** tsx's loader as a URL for `--import` (resolved from this package, not from the working directory). */
export const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** The node arguments that run the CLI from source. */
export function sourceCommand(args: readonly string[]): string[] {
  return ['--conditions=@crewline/source', '--import', tsxLoader, binSource, ...args];
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `crewline <args>` from source in a child process in `cwd`; as user `uid` (and its group) when
 * given (a test run as root meeting the permissions a user would).
 */
export function runCrewlineProcess(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; uid?: number },
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, sourceCommand(args), {
      cwd: options.cwd,
      // Run as `node bin.ts`, as a CLI on the PATH is: hints say `crewline`, not the `pnpm crewline`
      // of the package manager that ran the tests (see commandName).
      env: { ...process.env, NO_COLOR: '1', npm_config_user_agent: '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
