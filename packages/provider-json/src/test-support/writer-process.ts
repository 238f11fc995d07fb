// A writer process for the multi-process concurrency test:
// node --conditions=@crewline/source --import tsx writer-process.ts <location> <count> <writerIndex>
import { writeCheckpointsAsWriter } from '@crewline/provider-testkit/fixtures';
import { JsonProvider } from '../json-provider.js';

const [location, count, writerIndex] = process.argv.slice(2);
const ids = await writeCheckpointsAsWriter(new JsonProvider(), location!, {
  writerIndex: Number(writerIndex),
  count: Number(count),
});
process.stdout.write(`${ids.length}\n`);
