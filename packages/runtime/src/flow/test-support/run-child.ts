import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type ChildScript, packageDirectory, prepareChildScript } from '../../e2e/support/child-process.js';
import type { ChildRequest } from './flow-child.js';

/** What one request of a child process did. */
export interface ChildRun {
  executions: string[];
  llmCalls: number;
  result?: {
    status: string;
    stateId: string;
    state: Record<string, unknown>;
    output: unknown;
    completedMethods: string[];
    pause: { methodName: string; message: string; resumeFrom?: string; hint: string } | null;
  };
  /** The child was killed at its kill point. */
  killed: boolean;
}

/** The flow child script, compiled once (see prepareChildScript). */
export function prepareFlowChild(): Promise<ChildScript> {
  return prepareChildScript(fileURLToPath(new URL('./flow-child.ts', import.meta.url)));
}

/**
 * Runs requests in one child process of `script` (from {@link prepareFlowChild}), killing it with
 * SIGKILL when it reports its kill point. Resolves with what each request did.
 */
export function runChild(
  script: ChildScript,
  requests: ChildRequest[],
  env: Record<string, string> = {},
): Promise<ChildRun[]> {
  const child = spawn(process.execPath, [...script.argv, JSON.stringify(requests)], {
    cwd: packageDirectory,
    env: { ...process.env, CREWLINE_LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const runs: ChildRun[] = [];
  let stdout = '';
  let stderr = '';
  let killed = false;
  const handle = (line: string) => {
    if (line.trim() === '') return;
    const message = JSON.parse(line) as Record<string, unknown>;
    if ('request' in message) runs.push({ executions: [], llmCalls: 0, killed: false });
    const current = runs.at(-1);
    if (!current) return;
    if (typeof message.exec === 'string') current.executions.push(message.exec);
    if (message.llm) current.llmCalls += 1;
    if (message.result) current.result = message.result as ChildRun['result'];
    if (message.killpoint) {
      current.killed = true;
      killed = true;
      child.kill('SIGKILL');
    }
  };
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    let newline = stdout.indexOf('\n');
    while (newline >= 0) {
      handle(stdout.slice(0, newline));
      stdout = stdout.slice(newline + 1);
      newline = stdout.indexOf('\n');
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (killed && signal === 'SIGKILL') resolve(runs);
      else if (!killed && code === 0) resolve(runs);
      else
        reject(
          new Error(
            `flow child exited with ${signal ?? code}${killed ? ' after its kill point' : ''}: ${stderr.slice(-3000)}`,
          ),
        );
    });
  });
}
