// `pnpm --filter @crewline/docs-check sync-bench`: copies the tables of bench/results/*.md into every
// document that marks a table with <!-- bench: bench/results/x.md -->, after `pnpm bench` wrote new ones.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withBenchTables } from './bench-tables.js';
import { checkedDocuments, repositoryRoot } from './documents.js';

for (const path of checkedDocuments()) {
  const file = join(repositoryRoot, path);
  const before = readFileSync(file, 'utf8');
  const after = withBenchTables(before, repositoryRoot);
  if (after !== before) {
    writeFileSync(file, after);
    process.stdout.write(`updated ${path}\n`);
  }
}
