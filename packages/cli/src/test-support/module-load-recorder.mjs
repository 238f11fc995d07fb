// Records the URL of every module a child `node` loads, one per line, in the file named by
// CREWLINE_MODULE_LOAD_LOG. Passed with `--import` after tsx's loader, it sees the URLs tsx resolves,
// so a test can prove what a command did *not* load (startup cost), which its output cannot show.
// Plain JavaScript: the loader hooks run in their own thread, where tsx's TypeScript loading is absent.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

let logFile;

export function initialize(data) {
  logFile = data.logFile;
}

export async function load(url, context, nextLoad) {
  appendFileSync(logFile, `${url}\n`);
  return nextLoad(url, context);
}

// The same file is the `--import` entry (main thread: register the hooks) and the hooks module.
if (isMainThread) {
  register(import.meta.url, { data: { logFile: process.env.CREWLINE_MODULE_LOAD_LOG } });
}
