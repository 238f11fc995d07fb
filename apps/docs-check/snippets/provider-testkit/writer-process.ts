// writer-process.ts — node writer-process.ts <location> <count> <index>
import { writeCheckpointsAsWriter } from '@crewline/provider-testkit/fixtures';
import { MyProvider } from './my-provider.js';

const [location, count, index] = process.argv.slice(2);
await writeCheckpointsAsWriter(new MyProvider(), location!, {
  writerIndex: Number(index),
  count: Number(count),
});
