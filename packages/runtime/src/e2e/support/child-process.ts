import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The runtime package directory: children run from it so `@crewline/*` resolve to their sources. */
export const packageDirectory = fileURLToPath(new URL('../../..', import.meta.url));

export interface StartedChild {
  child: ChildProcess;
  /** Every line printed on stdout so far. */
  lines: string[];
  /** Resolves with the first line (printed so far or later) that matches. */
  waitFor: (pattern: RegExp) => Promise<string>;
  /** Everything printed on stderr so far. */
  stderr: () => string;
}

/** Runs a TypeScript file of this package in a new Node process (`--import tsx`, sources resolved). */
export function startChild(script: string, args: readonly string[]): StartedChild {
  const child = spawn(
    process.execPath,
    ['--conditions=@crewline/source', '--import', 'tsx', script, ...args],
    {
      cwd: packageDirectory,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CREWLINE_LOG_LEVEL: 'error' },
    },
  );
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      lines.push(line);
      for (const waiter of waiters.filter((candidate) => candidate.pattern.test(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
      newline = buffered.indexOf('\n');
    }
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const waitFor = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const found = lines.find((line) => pattern.test(line));
      if (found) return resolve(found);
      waiters.push({ pattern, resolve });
      child.once('exit', () =>
        setTimeout(() => reject(new Error(`child exited before ${pattern}: ${stderr.slice(-2000)}`)), 50),
      );
    });
  return { child, lines, waitFor, stderr: () => stderr };
}

/** How a child ended. */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Runs `jobs` with at most `limit` at a time (the test machine has two cores). */
export async function limited<T>(limit: number, jobs: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < jobs.length) {
        const index = next;
        next += 1;
        results[index] = await jobs[index]!();
      }
    }),
  );
  return results;
}

/** A gate that lets at most `limit` callers run at once. */
export function concurrencyLimit(limit: number): <T>(job: () => Promise<T>) => Promise<T> {
  let running = 0;
  const queue: (() => void)[] = [];
  return async (job) => {
    if (running >= limit) await new Promise<void>((resolve) => queue.push(resolve));
    running += 1;
    try {
      return await job();
    } finally {
      running -= 1;
      queue.shift()?.();
    }
  };
}
