// A child process of the multi-process tests: writes checkpoints of its own run into one location.
// Usage: node --conditions=@crewline/source --import tsx writer-process.ts <location> <writer index> <count>
import { writeCheckpointsAsWriter } from '@crewline/provider-testkit/fixtures';
import { PostgresProvider } from '../postgres-provider.js';

const [location, writerIndex, count] = process.argv.slice(2);
const provider = new PostgresProvider();
try {
  const ids = await writeCheckpointsAsWriter(provider, location!, {
    writerIndex: Number(writerIndex),
    count: Number(count),
  });
  process.stdout.write(`${JSON.stringify({ written: ids.length })}\n`);
} finally {
  await provider.close();
}
