import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CallReport } from '../../src/call-report.js';

/** apps/tutorial */
export const appDirectory = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The repository root. */
export const repositoryRoot = resolve(appDirectory, '../..');

const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** Variables that would make the demo pick a real model or another storage: never passed on. */
const removed = [
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'OPENAI_COMPATIBLE_BASE_URL',
  'OPENAI_COMPATIBLE_MODEL',
  'CREWLINE_MODEL',
  'CREWLINE_STORAGE',
  'CREWLINE_CHECKPOINT_LOCATION',
  'CREWLINE_TUTORIAL_CALLS_FILE',
  'CREWLINE_TUTORIAL_LATENCY_MS',
  'INIT_CWD',
];

function childEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const name of removed) delete env[name];
  return { ...env, ...extra };
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Started {
  child: ChildProcess;
  /** Everything written to stdout so far. */
  stdout(): string;
  finished: Promise<Finished>;
}

function start(command: string, args: string[], cwd: string, env: Record<string, string>): Started {
  const child = spawn(command, args, { cwd, env: childEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const finished = new Promise<Finished>((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
  });
  return { child, stdout: () => stdout, finished };
}

export interface DemoOptions {
  /** The directory the user "typed the command in" (INIT_CWD): where ./.checkpoints goes. */
  base: string;
  /** The offline model's delay per call. */
  latencyMs: number;
  /** Where the offline model's call report goes. */
  callsFile: string;
}

/** Starts the demo exactly as `pnpm demo` does (node, the source condition, tsx, src/main.ts). */
export function startDemo(args: readonly string[], options: DemoOptions): Started {
  return start(
    process.execPath,
    ['--conditions=@crewline/source', '--import', tsxLoader, join(appDirectory, 'src/main.ts'), ...args],
    appDirectory,
    {
      INIT_CWD: options.base,
      CREWLINE_TUTORIAL_LATENCY_MS: String(options.latencyMs),
      CREWLINE_TUTORIAL_CALLS_FILE: options.callsFile,
    },
  );
}

/**
 * Runs `pnpm crewline <args>` in `cwd` (the repository root or apps/tutorial), the command the
 * demo tells people to type. In apps/tutorial the project's crewline.config.ts is loaded.
 */
export function runCrewline(
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Finished> {
  return start('pnpm', ['--silent', 'crewline', ...args], cwd, env).finished;
}

/** The call report the offline model wrote (test mode). */
export function readCalls(file: string): CallReport {
  return JSON.parse(readFileSync(file, 'utf8')) as CallReport;
}

/** Waits until `condition` holds, checking every 25 ms; fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  condition: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 25));
  }
}
