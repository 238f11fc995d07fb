// A child process of the crash trials: writes checkpoints as fast as it can (sync and async
// writes, pruning as it goes) until it is killed. Prints "ready" after its first checkpoint.
// Usage: node --conditions=@crewline/source --import tsx crash-writer.ts <location> <branch>

import { growingRun } from '@crewline/provider-testkit/fixtures';
import { SqliteProvider } from '../sqlite-provider.js';

const [location, branch] = process.argv.slice(2);
const provider = new SqliteProvider();
const run = growingRun({ provider, location: location!, tasks: 12, outputBytes: 1000 });
run.state.lineage.branch = branch!;
// Never outlive a test runner that died without killing us.
setTimeout(() => process.exit(3), 20_000).unref();
for (let index = 0; index < 100_000; index += 1) {
  const trigger = run.step();
  if (index % 2 === 0) run.state.writeCheckpointSync({ trigger, maxCheckpoints: 8 });
  else await run.state.writeCheckpoint({ trigger, maxCheckpoints: 8 });
  if (index === 0) process.stdout.write('ready\n');
  if (index % 25 === 24) await provider.collectGarbage(location!);
}
