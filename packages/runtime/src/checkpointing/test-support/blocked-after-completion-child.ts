// A child process for the group-commit kill test: a two-task crew checkpointing on '*' to SQLite with
// group commit (`groupCommit: true`), and a synchronous handler that blocks the process right after the
// first task completed — its model call was paid, the run has not reached its next call. The test
// kills it there. Usage: blocked-after-completion-child.ts <location>
import { writeSync } from 'node:fs';
import { type BaseEvent, eventBus } from '@crewline/events';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { blockedCrew } from './blocked-crew.js';

const [location] = process.argv.slice(2) as [string];
let blocked = false;
eventBus.onAny((_source: unknown, event: BaseEvent) => {
  if (event.type !== 'task_completed' || blocked) return;
  blocked = true;
  // A user's synchronous handler (a sync log to a slow disk, execSync, a report): the process is
  // killed while it runs.
  writeSync(1, 'blocked\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
});
const provider = new SqliteProvider({ groupCommit: true });
await blockedCrew({ provider, location, leaseTtlMs: 1000 }).crew.kickoff();
writeSync(1, 'finished without being killed\n');
