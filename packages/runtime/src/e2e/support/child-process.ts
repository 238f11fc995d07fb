import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The runtime package directory: children run from it so `@crewline/*` resolve to their sources. */
export const packageDirectory = fileURLToPath(new URL('../../..', import.meta.url));

/** How to start a child script: the node arguments that run it, and what to remove afterwards. */
export interface ChildScript {
  argv: string[];
  dispose(): void;
}

interface Bundler {
  build(options: Record<string, unknown>): Promise<unknown>;
}

/** The esbuild that tsx runs on (tsx is what runs the children otherwise), when it can be found. */
function findBundler(): Bundler | undefined {
  try {
    const tsxPackage = createRequire(import.meta.url).resolve('tsx/package.json');
    return createRequire(tsxPackage)('esbuild') as Bundler;
  } catch {
    return undefined;
  }
}

/**
 * Runs a child script through tsx, not bundled: for children that load a native module
 * (better-sqlite3), which a bundle cannot carry.
 */
export function tsxChildScript(script: string): ChildScript {
  return { argv: ['--conditions=@crewline/source', '--import', 'tsx', script], dispose: () => undefined };
}

/**
 * Compiles a child script and the sources it imports into one ESM file, once per test file, with
 * the compiler tsx uses. A child then starts in about a third of the CPU time of `--import tsx`,
 * which resolves and loads every module through loader hooks; what the child runs is the same code.
 * Falls back to `--import tsx` when esbuild cannot be found.
 */
export async function prepareChildScript(script: string): Promise<ChildScript> {
  const fallback = tsxChildScript(script);
  const bundler = findBundler();
  if (!bundler) return fallback;
  const directory = mkdtempSync(join(tmpdir(), 'crewline-child-'));
  const outfile = join(directory, `${basename(script, '.ts')}.mjs`);
  await bundler.build({
    entryPoints: [script],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@crewline/source'],
    // A native module cannot be bundled; the children checkpoint as JSON and never load it.
    external: ['better-sqlite3'],
    // CommonJS dependencies inside an ESM bundle still call require() for Node's built-ins.
    banner: {
      js: "import { createRequire as createRequire_ } from 'node:module'; const require = createRequire_(import.meta.url);",
    },
    logLevel: 'error',
  });
  return { argv: [outfile], dispose: () => rmSync(directory, { recursive: true, force: true }) };
}

export interface StartedChild {
  child: ChildProcess;
  /** Every line printed on stdout so far. */
  lines: string[];
  /** Resolves with the first line (printed so far or later) that matches. */
  waitFor: (pattern: RegExp) => Promise<string>;
  /** Everything printed on stderr so far. */
  stderr: () => string;
}

/** Runs a child script (see {@link prepareChildScript}) in a new Node process, from this package. */
export function startChild(script: ChildScript, args: readonly string[]): StartedChild {
  const child = spawn(process.execPath, [...script.argv, ...args], {
    cwd: packageDirectory,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CREWLINE_LOG_LEVEL: 'error' },
  });
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
    // A finishing job hands its slot straight to the next waiter, so the limit is never exceeded.
    if (running >= limit) await new Promise<void>((resolve) => queue.push(resolve));
    else running += 1;
    try {
      return await job();
    } finally {
      const next = queue.shift();
      if (next) next();
      else running -= 1;
    }
  };
}
