// Starting crash-trial children cheaply: the child script and the sources it imports are compiled
// once into one ESM file with the compiler tsx runs on (esbuild), so a child starts in a fraction of
// the CPU time of `--import tsx`. Startup matters here: a kill that lands while the child is still
// loading modules tests nothing, and 2 × 200 trials start about 800 processes.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The bench package directory (its node_modules holds better-sqlite3 and the workspace packages). */
export const benchDirectory = fileURLToPath(new URL('../..', import.meta.url));

/** How to start a child script: the node arguments that run it, and what to remove afterwards. */
export interface ChildScript {
  argv: string[];
  /** `bundled` (one compiled file) or `tsx` (the fallback when esbuild cannot be found). */
  how: 'bundled' | 'tsx';
  dispose(): void;
}

interface Bundler {
  build(options: Record<string, unknown>): Promise<unknown>;
}

function findBundler(): Bundler | undefined {
  try {
    const tsxPackage = createRequire(join(benchDirectory, 'package.json')).resolve('tsx/package.json');
    return createRequire(tsxPackage)('esbuild') as Bundler;
  } catch {
    return undefined;
  }
}

/**
 * Packages the runtime imports by name at run time (an optional provider is imported through a
 * variable, so no bundler sees it). Each is compiled as a package of its own in the child's
 * `node_modules`, sharing the child's module chunks: one copy of every module, as in a real install.
 */
const packagesImportedAtRunTime = ['@crewline/provider-sqlite'];

/** Packages the child resolves from disk: the native module, and the runtime (to find its zod). */
const linkedPackages = ['better-sqlite3', '@crewline/runtime'];

/** Compiles `script` (and the packages the runtime imports by name) into one directory of modules. */
export async function prepareChildScript(script: string): Promise<ChildScript> {
  const conditions = '--conditions=@crewline/source';
  const bundler = findBundler();
  if (!bundler) {
    return { argv: [conditions, '--import', 'tsx', script], how: 'tsx', dispose: () => undefined };
  }
  const directory = mkdtempSync(join(tmpdir(), 'crewline-crash-child-'));
  for (const name of linkedPackages) {
    mkdirSync(dirname(join(directory, 'node_modules', name)), { recursive: true });
    symlinkSync(join(benchDirectory, 'node_modules', name), join(directory, 'node_modules', name), 'dir');
  }
  const packageEntries = packagesImportedAtRunTime.map((name) => {
    const packageDirectory = join(directory, 'node_modules', name);
    mkdirSync(packageDirectory, { recursive: true });
    writeFileSync(
      join(packageDirectory, 'package.json'),
      JSON.stringify({ name, type: 'module', exports: './index.mjs' }),
    );
    return { in: fileURLToPath(import.meta.resolve(name)), out: `node_modules/${name}/index` };
  });
  const entry = basename(script, '.ts');
  await bundler.build({
    entryPoints: [{ in: script, out: entry }, ...packageEntries],
    outdir: directory,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@crewline/source'],
    // A native module cannot be bundled; it resolves through the node_modules link.
    external: ['better-sqlite3'],
    // CommonJS dependencies inside an ESM bundle still call require() for Node's built-ins.
    banner: {
      js: "import { createRequire as createRequire_ } from 'node:module'; const require = createRequire_(import.meta.url);",
    },
    logLevel: 'error',
  });
  // The condition still matters at run time: the tool schema's zod is found through the runtime's
  // source entry (see runtime-zod.ts).
  return {
    argv: [conditions, join(directory, `${entry}.mjs`)],
    how: 'bundled',
    dispose: () => rmSync(directory, { recursive: true, force: true }),
  };
}

export interface StartedChild {
  child: ChildProcess;
  /** When the process was spawned (performance.now()). */
  startedAt: number;
  /** Resolves when the process has ended, with how, its output and its wall time since spawn. */
  ended: Promise<ChildEnd>;
}

export interface ChildEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  wallMs: number;
}

/** Starts a child script with arguments; stdout and stderr are collected, never interpreted on the way. */
export function startChild(script: ChildScript, args: readonly string[]): StartedChild {
  const startedAt = performance.now();
  const child = spawn(process.execPath, [...script.argv, ...args], {
    cwd: benchDirectory,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CREWLINE_LOG_LEVEL: 'error' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let exitedAt = 0;
  child.once('exit', () => {
    exitedAt = performance.now();
  });
  // 'close' comes after the output is all read; the wall time ends at 'exit'.
  const ended = new Promise<ChildEnd>((resolve) => {
    child.once('close', (code, signal) =>
      resolve({ code, signal, stdout, stderr, wallMs: (exitedAt || performance.now()) - startedAt }),
    );
  });
  return { child, startedAt, ended };
}
