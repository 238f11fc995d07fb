import { type ChildProcess, spawn } from 'node:child_process';
import { inject } from 'vitest';
import type {} from './bundle-worker-child.js';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

export interface WorkerChild {
  process: ChildProcess;
  pid: number;
  /** Every stdout line so far. */
  lines: string[];
  waitFor(pattern: RegExp): Promise<string>;
  stderr(): string;
  exit: Promise<ChildExit>;
}

/** Starts the compiled worker child (worker-child.ts) with `options` in a new Node process. */
export function startWorkerChild(options: object, environment: NodeJS.ProcessEnv = {}): WorkerChild {
  const child = spawn(process.execPath, [inject('workerChild'), JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...environment },
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      lines.push(line);
      for (const waiter of waiters.filter((candidate) => candidate.pattern.test(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exit = new Promise<ChildExit>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
  return {
    process: child,
    pid: child.pid!,
    lines,
    waitFor: (pattern) =>
      new Promise<string>((resolve, reject) => {
        const found = lines.find((line) => pattern.test(line));
        if (found !== undefined) return resolve(found);
        waiters.push({ pattern, resolve });
        void exit.then((ended) =>
          reject(
            new Error(
              `worker ${child.pid} exited (${ended.code ?? ended.signal}) before ${pattern}: ${ended.stderr.slice(-2000)}`,
            ),
          ),
        );
      }),
    stderr: () => stderr,
    exit,
  };
}
