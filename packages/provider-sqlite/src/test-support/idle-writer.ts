// A child process of the WAL crash trial: writes checkpoints with an idle turn of the event loop
// every two writes (a run waiting for its model), so that the checkpointer thread copies the WAL back
// while the writes go on, and the writer restarts it. Prints each checkpoint's id once its write has returned
// (committed), "ready" after the first, and how many passes the thread ran ("passes N") every 20
// writes. Runs until it is killed, or, given a number of writes, ends after them (and a first pass of
// the thread) without closing the provider (a script that just ends), printing "passes N" last.
// Usage: node --conditions=@crewline/source --import tsx idle-writer.ts <location> <branch> [writes]

import { growingRun } from '@crewline/provider-testkit/fixtures';
import { WalCheckpointer } from '../database/wal-checkpointer.js';
import { SqliteProvider } from '../sqlite-provider.js';

let checkpointer: WalCheckpointer | undefined;
const start = WalCheckpointer.start;
WalCheckpointer.start = (...parameters) => {
  checkpointer = start.apply(WalCheckpointer, parameters);
  return checkpointer;
};

const [location, branch, writes] = process.argv.slice(2);
const provider = new SqliteProvider();
const run = growingRun({ provider, location: location!, tasks: 40, outputBytes: 2000 });
run.state.lineage.branch = branch!;
// Never outlive a test runner that died without killing us.
setTimeout(() => process.exit(3), 20_000).unref();
// Given a number of writes: at least that many, and on until the thread has run a pass (it starts
// at the first idle turn, and a loaded machine may take a while to run it).
const enough = (index: number) =>
  writes !== undefined && index >= Number(writes) && (checkpointer?.passes ?? 0) > 0;
for (let index = 0; index < 100_000 && !enough(index); index += 1) {
  run.state.writeCheckpointSync({ trigger: run.step() });
  process.stdout.write(`${index === 0 ? 'ready\n' : ''}${run.state.lineage.checkpointId}\n`);
  if (index % 20 === 19) process.stdout.write(`passes ${checkpointer?.passes ?? 0}\n`);
  if (index % 2 === 1) await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
}
if (writes !== undefined) process.stdout.write(`passes ${checkpointer?.passes ?? 0}\n`);
