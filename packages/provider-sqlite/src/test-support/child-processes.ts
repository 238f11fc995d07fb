import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
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

/**
 * Starts `count` claimer processes (claimer-process.ts, owners `owner-0`...) that claim the head
 * `checkpointId` of `lineageId` at one agreed moment, 4 s from now, and keeps every one of them alive
 * until all have answered (a winner that ended before the others would be a dead holder, taken over
 * at once). `open`: whether they open the database before the race or in it.
 */
export async function raceClaims(
  location: string,
  lineageId: string,
  checkpointId: string,
  count: number,
  open: 'open-first' | 'open-in-race',
) {
  const doneFile = `${location}.claims-done`;
  const startAt = String(Date.now() + 4_000);
  let answered = 0;
  const children = Array.from({ length: count }, (_, index) =>
    runScript(
      './claimer-process.ts',
      [location, lineageId, checkpointId, `owner-${index}`, startAt, open, doneFile],
      (text) => {
        answered += text.split('\n').filter((line) => line.startsWith('{')).length;
        if (answered >= count) writeFileSync(doneFile, '');
      },
    ),
  );
  // A child that fails before answering must not leave the others waiting.
  for (const child of children) void child.done.then(() => writeFileSync(doneFile, ''));
  try {
    return await Promise.all(children.map((child) => child.done));
  } finally {
    rmSync(doneFile, { force: true });
  }
}
