// `pnpm --filter @crewline/docs-check sync`: after changing a snippet file or running `pnpm bench`,
// copies the current code of every marked TypeScript block and the tables of bench/results/*.md into
// the documents that show them. The tests then check that nothing was left out of step.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withBenchTables } from './bench-tables.js';
import { checkedDocuments, repositoryRoot } from './documents.js';
import { withSnippetBlocks } from './snippet-blocks.js';

for (const path of checkedDocuments()) {
  const file = join(repositoryRoot, path);
  const before = readFileSync(file, 'utf8');
  const after = withBenchTables(withSnippetBlocks(before, repositoryRoot), repositoryRoot);
  if (after !== before) {
    writeFileSync(file, after);
    process.stdout.write(`updated ${path}\n`);
  }
}
