import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProviderRegistry } from '@crewline/runtime-state';
import type { CliContext, TextSink } from '../core/cli-context.js';
import { runCli } from '../main.js';

/** A text sink that keeps what is written. */
export class CapturedOutput implements TextSink {
  text = '';
  isTTY = false;
  columns = 120;
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `crewline <args>` in-process in `cwd` and captures its output and exit code. */
export async function runCommand(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; providers?: ProviderRegistry },
): Promise<CommandResult> {
  const stdout = new CapturedOutput();
  const stderr = new CapturedOutput();
  const context: CliContext = {
    cwd: options.cwd,
    env: options.env ?? {},
    stdout,
    stderr,
    ...(options.providers ? { providers: options.providers } : {}),
  };
  const code = await runCli(args, context);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** A fresh temporary directory, removed by the returned function. */
export async function temporaryDirectory(
  prefix = 'crewline-cli-',
): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
