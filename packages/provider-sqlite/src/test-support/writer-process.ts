// A child process of the multi-process tests: writes checkpoints of its own run into one database.
// Usage: node --conditions=@crewline/source --import tsx writer-process.ts <location> <writer index> <count> [busyTimeoutMs]
import { writeCheckpointsAsWriter } from '@crewline/provider-testkit/fixtures';
import { SqliteProvider } from '../sqlite-provider.js';

const [location, writerIndex, count, busyTimeoutMs] = process.argv.slice(2);
const provider = new SqliteProvider(
  busyTimeoutMs === undefined ? {} : { busyTimeoutMs: Number(busyTimeoutMs) },
);
try {
  const ids = await writeCheckpointsAsWriter(provider, location!, {
    writerIndex: Number(writerIndex),
    count: Number(count),
  });
  process.stdout.write(`${JSON.stringify({ written: ids.length })}\n`);
} finally {
  provider.close();
}
