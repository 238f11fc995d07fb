import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sourceCommand } from './subprocess.js';

/**
 * Writes a crewline.config.mjs into `project` whose model (the one the test checkpoints name) takes
 * 3 s a call: a Ctrl+C then lands while a task runs.
 */
export async function writeSlowModelConfig(project: string): Promise<void> {
  await writeFile(
    join(project, 'crewline.config.mjs'),
    `import { offlineModel } from '@crewline/runtime/testing';
const model = offlineModel({ name: 'cli-test', latencyMs: 3000 });
export default { models: { 'offline:cli-test': () => model } };
`,
  );
}

/** How an interrupted fork ended, and the last checkpoint it said it wrote before the signal. */
export interface InterruptedFork {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  written: string;
}

/**
 * Runs `crewline checkpoint fork <reference>` in `project` and sends it SIGINT (a Ctrl+C) once it
 * has written a checkpoint and started its third task; resolves when the process has ended.
 */
export async function forkInterruptedAtThirdTask(
  project: string,
  reference: string,
): Promise<InterruptedFork> {
  const child = spawn(process.execPath, sourceCommand(['checkpoint', 'fork', reference]), {
    cwd: project,
    // As a CLI on the PATH: hints say `crewline`, not the test runner's `pnpm crewline` (commandName).
    env: { ...process.env, NO_COLOR: '1', npm_config_user_agent: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const written = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /checkpoint (\S+) written/.exec(stdout);
      if (match && /task 3 \S+ started/.test(stdout)) resolve(match[1]!);
    });
    child.on('close', () => reject(new Error(`fork ended before its third task: ${stdout}${stderr}`)));
  });
  child.kill('SIGINT');
  return { ...(await ended), stdout, stderr, written };
}
