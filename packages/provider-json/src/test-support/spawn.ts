import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The package directory (children resolve `tsx` and workspace packages from there). */
export const packageDirectory = fileURLToPath(new URL('../..', import.meta.url));

/** Starts a TypeScript script of test-support the way the repo runs scripts (source condition, tsx). */
export function spawnScript(script: string, args: readonly string[]): ChildProcess {
  return spawn(
    process.execPath,
    [
      '--conditions=@crewline/source',
      '--import',
      'tsx',
      fileURLToPath(new URL(script, import.meta.url)),
      ...args,
    ],
    { cwd: packageDirectory, stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

/** Resolves when the child exits with code 0; rejects with its stderr otherwise. */
export function waitForSuccess(child: ChildProcess, what: string): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${what} exited with ${signal ?? code}: ${stderr.slice(-2000)}`));
    });
  });
}
