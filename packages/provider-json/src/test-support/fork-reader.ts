// A process that reads a checkpoint as a fork reads its parent, for the tests of what its read pin
// becomes when it ends (fork-read-pin.test.ts):
// node --conditions=@crewline/source --import tsx fork-reader.ts <location> <id> [exit|wait]
// `exit` reads, then ends normally (its `exit` listeners run); `wait` reads, prints "ready <pid>" and
// waits to be killed (a SIGKILL runs no listener).
import { JsonProvider } from '../json-provider.js';

const [location, id, mode] = process.argv.slice(2) as [string, string, string];
await new JsonProvider().read(location, id);
if (mode === 'wait') {
  process.stdout.write(`ready ${process.pid}\n`);
  // Kept alive until it is killed.
  setInterval(() => undefined, 60_000);
}
