// `pnpm example` (or `pnpm --filter @crewline/example-storage start`): checkpoints written, listed and
// restored with RuntimeState directly, once with JSON files and once with SQLite.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { runStorageExample } from './storage-example.js';

const directory = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'crewline-storage-example-'));
const out = (line = '') => process.stdout.write(`${line}\n`);

const runs: [CheckpointProvider, string][] = [
  [new JsonProvider(), join(directory, 'checkpoints')],
  [new SqliteProvider(), join(directory, 'checkpoints.db')],
];
for (const [provider, location] of runs) {
  const report = await runStorageExample(provider, location);
  out(`${report.provider}: ${report.location}`);
  out('  listed (oldest first):');
  for (const entry of report.listed) {
    const summary = entry.entities
      .map((entity) => `${entity.name} ${entity.completed}/${entity.total}`)
      .join(', ');
    out(
      `    ${entry.id}  ${entry.branch.padEnd(8)} parent ${entry.parentId ?? '-'}  ${entry.trigger}  ${summary}`,
    );
  }
  out(`  restored ${report.restored.reference}`);
  out(`    items: ${report.restored.items.join(', ')}`);
  out(`  continued from it: ${report.continued.id} (parent ${report.continued.parentId})`);
  await provider.close?.();
  out();
}
out(`Look at them with: pnpm crewline checkpoint list ${join(directory, 'checkpoints')}`);
out(`               or: pnpm crewline checkpoint list ${join(directory, 'checkpoints.db')}`);
