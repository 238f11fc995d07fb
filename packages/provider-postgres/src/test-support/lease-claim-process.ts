// A child process of the lease tests: claims the head of a run for a holder named on its command line
// and ends without releasing it, so another process's unexpired lease holds the run.
// Usage: node --conditions=@crewline/source --import tsx lease-claim-process.ts <location> <lineage> <checkpoint> <holder>
import { randomUUID } from 'node:crypto';
import { PostgresProvider } from '../postgres-provider.js';

const [location, lineageId, checkpointId, holder] = process.argv.slice(2);
const provider = new PostgresProvider({ poolSize: 1 });
try {
  const lease = await provider.claimLease(location!, {
    lineageId: lineageId!,
    owner: randomUUID(),
    checkpointId: checkpointId!,
    holder: holder!,
    ttlMs: 60_000,
  });
  process.stdout.write(`${JSON.stringify({ holder: lease.holder })}\n`);
} finally {
  await provider.close();
}
