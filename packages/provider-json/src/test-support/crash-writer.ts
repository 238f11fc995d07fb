// Writes checkpoints in a loop until it is killed, for the SIGKILL crash trial:
// node --conditions=@crewline/source --import tsx crash-writer.ts <location> <trial>
// Prints "ready" after its first checkpoint, then one line per checkpoint.
import { advanceTestRun, createTestRun, TestCrew } from '@crewline/provider-testkit/fixtures';
import { JsonProvider } from '../json-provider.js';

const [location, trial] = process.argv.slice(2);
const provider = new JsonProvider();
const run = createTestRun({
  provider,
  location: location!,
  branch: Number(trial) % 2 === 0 ? 'main' : `fork/trial-${trial}`,
  crew: new TestCrew({ id: `crash-${trial}` }),
});
// Big enough (about 256 KiB a checkpoint) that a kill often lands inside a write.
run.crew.extra = { padding: 'x'.repeat(256 * 1024) };
for (let index = 0; ; index += 1) {
  advanceTestRun(run, `trial ${trial} checkpoint ${index}`);
  const stored =
    index % 2 === 0
      ? run.state.writeCheckpointSync({ trigger: 'task_completed' })
      : await run.state.writeCheckpoint({ trigger: 'task_completed' });
  process.stdout.write(index === 0 ? `ready ${stored.id}\n` : `${stored.id}\n`);
}
