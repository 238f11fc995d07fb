// A process that keeps spare temp files in a location, for the tests of how they go away:
// node --conditions=@crewline/source --import tsx spare-keeper.ts <location> <ending>
// Writes one group of 4 checkpoints (8 spares are then made ahead), prints "ready <pid>" once they
// exist and waits. <ending> is how it ends then:
//   signal  on SIGINT, closes its provider without waiting and raises the signal again, as the
//           runtime's signal handling does once a run's writes are done (the process then ends
//           before any promise settles)
//   exit    calls process.exit(0)
//   kill    waits to be killed (SIGKILL)
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildCheckpointWrite, createTestRun } from '@crewline/provider-testkit/fixtures';
import { JsonProvider } from '../json-provider.js';

const [location, ending] = process.argv.slice(2) as [string, string];
const provider = new JsonProvider();
const run = createTestRun({ provider, location });
await provider.writeBatch(
  location,
  Array.from({ length: 4 }, () => buildCheckpointWrite({ run })),
);
const own = `.spare.${process.pid}.`;
const spares = () => readdirSync(join(location, 'main')).filter((name) => name.startsWith(own)).length;
while (spares() < 8) await new Promise((resolve) => setTimeout(resolve, 5));

if (ending === 'signal') {
  const onSignal = () => {
    process.removeListener('SIGINT', onSignal);
    void provider.close();
    process.kill(process.pid, 'SIGINT');
  };
  process.on('SIGINT', onSignal);
}
process.stdout.write(`ready ${process.pid}\n`);
if (ending === 'exit') process.exit(0);
// Kept alive until a signal or a kill ends it.
setInterval(() => undefined, 60_000);
