// A run that is killed with SIGKILL in the middle of its work, for the tests of what a later process
// cleans up (crash-leftovers.test.ts):
// node --conditions=@crewline/source --import tsx killed-run.ts <location> <lineage> [lock-write]
// Claims the lock of a fresh lineage (as every run that fences does first), writes its first
// checkpoint under it, then leaves 6 temp files named as a group of writes names them, partly
// written (a group killed before its renames), prints "ready <pid>" and waits to be killed. With
// `lock-write`, it also leaves the temp file of a write of its lock (a renewal's, say) whole, as one
// killed between writing it and renaming it over the lock does.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import { tempFileName } from '../file-names.js';
import { JsonProvider } from '../json-provider.js';
import { writeTemp } from '../read/whole-file.js';

const [location, lineageId, mode] = process.argv.slice(2) as [string, string, string | undefined];
const provider = new JsonProvider();
const owner = `owner-${process.pid}`;
await provider.claimLease(location, {
  lineageId,
  owner,
  checkpointId: null,
  holder: `killed run ${process.pid}`,
  ttlMs: 60 * 60 * 1000,
});
const write = buildCheckpointWrite({ metadata: { lineageId, branch: 'main' } });
const stored = await provider.write(location, { ...write, lease: { lineageId, owner } });
await provider.close();
for (let index = 0; index < 6; index += 1)
  writeFileSync(join(location, 'main', tempFileName(`${stored.id}${index}`)), '{"format": "crewline.checkp');
if (mode === 'lock-write')
  writeTemp(join(location, '.leases', `${lineageId}.lock`), JSON.stringify({ owner, holder: 'renewing' }));
process.stdout.write(`ready ${process.pid}\n`);
// Kept alive until it is killed.
setInterval(() => undefined, 60_000);
