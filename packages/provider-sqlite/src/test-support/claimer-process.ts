// A child process of the lease tests: claims one lineage head at an agreed moment, so that several
// processes race for it. Prints `{"granted":true}` or `{"conflict":<details>}`.
// Usage: node --conditions=@crewline/source --import tsx claimer-process.ts <location> <lineage> <checkpoint id> <owner> <start at (ms since epoch)>
import { CrewlineError } from '@crewline/events';
import { SqliteProvider } from '../sqlite-provider.js';

const [location, lineageId, checkpointId, owner, startAt] = process.argv.slice(2);
// busy_timeout of 1 ms: the claims collide on the write lock, and the provider's own retry must cure it.
const provider = new SqliteProvider({ busyTimeoutMs: 1 });
try {
  // Opens the writable connection before the race (a release of a lease nobody holds changes nothing).
  await provider.releaseLease(location!, { lineageId: lineageId!, owner: owner! });
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));
  try {
    await provider.claimLease(location!, {
      lineageId: lineageId!,
      owner: owner!,
      checkpointId: checkpointId!,
      holder: `claimer ${owner}`,
      ttlMs: 60_000,
    });
    process.stdout.write(`${JSON.stringify({ granted: true })}\n`);
  } catch (error) {
    if (!CrewlineError.hasCode(error, 'conflict')) throw error;
    process.stdout.write(`${JSON.stringify({ conflict: error.details, message: error.message })}\n`);
  }
} finally {
  provider.close();
}
