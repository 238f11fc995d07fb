#!/usr/bin/env node
import { runCli } from './main.js';

// The exit code is set rather than forced so pending output (pipes) is flushed before exiting.
runCli(process.argv.slice(2)).then(
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
