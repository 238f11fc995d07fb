// A child process of the lease tests: claims one lineage head at an agreed moment, so that several
// processes race for it. Prints `{"granted":true}` or `{"conflict":<details>}`, then stays alive until
// the file <done file> exists: a winner that exited at once would be a dead holder, which the next
// claim (still retrying while the database was busy) rightly takes over.
// With `open-in-race`, the processes also open the database in the race (and so upgrade an older one
// at once); with `open-first`, before it.
// Usage: node --conditions=@crewline/source --import tsx claimer-process.ts <location> <lineage> <checkpoint id> <owner> <start at (ms since epoch)> <open-first|open-in-race> <done file>
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { CrewlineError } from '@crewline/events';
import { SqliteProvider } from '../sqlite-provider.js';

const [location, lineageId, checkpointId, owner, startAt, open, doneFile] = process.argv.slice(2);
// busy_timeout of 1 ms: the claims collide on the write lock, and the provider's own retry must cure it.
const provider = new SqliteProvider({ busyTimeoutMs: 1 });
const waitForStart = () => sleep(Math.max(0, Number(startAt) - Date.now()));
try {
  if (open === 'open-in-race') await waitForStart();
  // Opens the writable connection (a release of a lease nobody holds changes nothing).
  await provider.releaseLease(location!, { lineageId: lineageId!, owner: owner! });
  if (open !== 'open-in-race') await waitForStart();
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
  const giveUpAt = Date.now() + 120_000;
  while (!existsSync(doneFile!) && Date.now() < giveUpAt) await sleep(20);
} finally {
  provider.close();
}
