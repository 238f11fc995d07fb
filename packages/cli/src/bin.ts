#!/usr/bin/env node
import { endsWhenOutputCloses, runCli } from './main.js';

const argv = process.argv.slice(2);
const endsQuietly = endsWhenOutputCloses(argv);

// `crewline list | head` closes the pipe early: a command that only prints stops quietly, as other
// command-line tools do. A resume, fork or rerun is not cut off by it (that skipped the runtime's
// signal path and its writes in flight): the closed stream's writes are dropped, and the command
// ends with its own status once its run does.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (endsQuietly) process.exit(process.exitCode ?? 0);
    dropWrites(stream);
  });
}

/** Makes every later write to `stream` succeed at once without writing: its reader has gone. */
function dropWrites(stream: NodeJS.WriteStream): void {
  stream.write = ((_chunk: unknown, encodingOrDone?: unknown, done?: unknown) => {
    const callback = typeof encodingOrDone === 'function' ? encodingOrDone : done;
    if (typeof callback === 'function') process.nextTick(callback);
    return true;
  }) as typeof stream.write;
}

// The exit code is set rather than forced so pending output (pipes) is flushed before exiting.
runCli(argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `crewline: unexpected error: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exitCode = 70;
  },
);
