import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Runs a TypeScript file of this folder as a child process, the way a user's script would run. */
export function runScript(
  script: string,
  args: readonly string[],
  onOutput?: (text: string) => void,
): {
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  pid: number;
  kill: (signal: NodeJS.Signals) => void;
} {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(process.execPath, ['--conditions=@crewline/source', '--import', 'tsx', path, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    stdout += text;
    onOutput?.(text);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const done = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { done, pid: child.pid!, kill: (signal) => child.kill(signal) };
}

/** Starts `count` writer processes on one database and waits for all; rejects when one fails. */
export async function spawnWriters(location: string, count: number, perWriter: number): Promise<void> {
  const runs = Array.from(
    { length: count },
    (_, index) => runScript('./writer-process.ts', [location, String(index), String(perWriter)]).done,
  );
  const results = await Promise.all(runs);
  const failed = results.filter((result) => result.code !== 0);
  if (failed.length > 0) {
    throw new Error(
      `${failed.length} of ${count} writer processes failed: ${failed.map((result) => result.stderr.trim() || `exit ${result.code} ${result.signal}`).join(' | ')}`,
    );
  }
}
