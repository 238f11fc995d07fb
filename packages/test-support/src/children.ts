import { type ChildProcess, spawn } from 'node:child_process';

/** How a child ended, with everything it printed. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Child {
  process: ChildProcess;
  pid: number;
  /** Every line printed on stdout so far. */
  lines: string[];
  /** Resolves with the first stdout line (printed so far or later) that matches. */
  waitFor(pattern: RegExp): Promise<string>;
  /** Writes one line to the child's stdin and closes it (the start signal of a barrier). */
  send(line: string): void;
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** Resolves when the child has exited. */
  exit: Promise<ChildExit>;
}

/** Starts `script` (a compiled child script, see bundle-child-script.ts) with `args` in a new Node process. */
export function startChild(
  script: string,
  args: readonly string[],
  environment: NodeJS.ProcessEnv = {},
): Child {
  const child = spawn(process.execPath, [script, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...environment },
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let buffered = '';
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    stdout += text;
    buffered += text;
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
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  // A child killed before it read its stdin must not fail the test with EPIPE.
  child.stdin.on('error', () => undefined);
  const exit = new Promise<ChildExit>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
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
              `child ${child.pid} exited (${ended.code ?? ended.signal}) before ${pattern}: ${ended.stderr.slice(-2000)}`,
            ),
          ),
        );
      }),
    stderr: () => stderr,
    send: (line) => {
      child.stdin.end(`${line}\n`);
    },
    exit,
  };
}

/** The JSON a child printed on its `result` line. */
export function resultOf<T>(child: Child): T {
  const line = child.lines.find((candidate) => candidate.startsWith('result '));
  if (line === undefined) {
    throw new Error(
      `child ${child.pid} printed no result; it printed: ${child.lines.join(' | ')}; on stderr: ${child.stderr().slice(-3000)}`,
    );
  }
  return JSON.parse(line.slice('result '.length)) as T;
}
