// A child process of the lease tests: claims one lineage head, prints `claimed`, then stays alive
// holding it (without renewing) until it is killed.
// Usage: node --conditions=@crewline/source --import tsx lease-holder-process.ts <location> <lineage> <checkpoint id> <owner> <ttl ms>
import { SqliteProvider } from '../sqlite-provider.js';

const [location, lineageId, checkpointId, owner, ttlMs] = process.argv.slice(2);
const provider = new SqliteProvider();
await provider.claimLease(location!, {
  lineageId: lineageId!,
  owner: owner!,
  checkpointId: checkpointId!,
  holder: `holder ${owner}, pid ${process.pid}`,
  ttlMs: Number(ttlMs),
});
process.stdout.write('claimed\n');
// Kept alive by the timer: the test ends this process with a signal.
setInterval(() => {}, 60_000);
