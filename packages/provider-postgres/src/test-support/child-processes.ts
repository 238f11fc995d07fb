import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Runs a TypeScript file of this folder as a child process, the way a user's script would run. */
export function runScript(
  script: string,
  args: readonly string[],
  environment: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(process.execPath, ['--conditions=@crewline/source', '--import', 'tsx', path, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...environment },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * Starts `count` writer processes on one location and waits for all; rejects when one fails. The
 * location they get is the redacted one (as a reference would be): the password reaches them the way
 * it reaches a worker on another machine, through `PGPASSWORD`.
 */
export async function spawnWriters(
  location: string,
  count: number,
  perWriter: number,
  password?: string,
): Promise<string[]> {
  const results = await Promise.all(
    Array.from({ length: count }, (_, index) =>
      runScript(
        './writer-process.ts',
        [location, String(index), String(perWriter)],
        password === undefined ? {} : { PGPASSWORD: password },
      ),
    ),
  );
  const failed = results.filter((result) => result.code !== 0);
  if (failed.length > 0) {
    throw new Error(
      `${failed.length} of ${count} writer processes failed: ${failed.map((result) => result.stderr.trim() || `exit ${result.code} ${result.signal}`).join(' | ')}`,
    );
  }
  return results.map((result) => result.stdout);
}
