import { spawn } from 'node:child_process';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Wall time in milliseconds. */
  elapsed: number;
}

export interface RunOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Kill the command after this many milliseconds. Default: 120 s. */
  timeoutMs?: number;
}

/** Runs a command to its end and collects its output; never rejects on a non-zero exit. */
export function run(command: string, args: readonly string[], options: RunOptions): Promise<CommandResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, elapsed: Date.now() - started });
    });
  });
}

/** Like {@link run}, and throws with the command's output when it fails. */
export async function runOrThrow(
  command: string,
  args: readonly string[],
  options: RunOptions,
): Promise<CommandResult> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} (in ${options.cwd}) exited with ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
    );
  }
  return result;
}

/** A command left running (a server), whose output so far can be read and waited on. */
export interface RunningCommand {
  /** What it printed so far. */
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves with the first match of `pattern` in its stdout; rejects when it exits or `timeoutMs` passes first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends `signal` and resolves with its exit code once it has exited (SIGKILL after 10 s). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts a long-running command (a server); stop it with `stop()`. */
export function start(command: string, args: readonly string[], options: RunOptions): RunningCommand {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.on('close', (code) => {
      exitCode = code;
      resolve(code);
    });
  });
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return {
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const deadline = Date.now() + timeoutMs;
        const poll = () => {
          const match = stdout.match(pattern);
          if (match) return resolve(match);
          if (exitCode !== undefined || Date.now() > deadline) {
            const why =
              exitCode !== undefined
                ? `exited with ${exitCode}`
                : `printed nothing like it in ${timeoutMs} ms`;
            return reject(
              new Error(
                `${command} ${args.join(' ')} ${why} (waiting for ${pattern})\n--- stdout\n${stdout}\n--- stderr\n${stderr}`,
              ),
            );
          }
          setTimeout(poll, 50);
        };
        poll();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (exitCode !== undefined) return exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
