import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Every markdown file whose code this package keeps honest: the root README, everything under
 * docs/, and the READMEs of the apps.
 */
export function checkedDocuments(): string[] {
  const documents = ['README.md'];
  const docs = join(repositoryRoot, 'docs');
  if (existsSync(docs)) {
    for (const entry of readdirSync(docs, { recursive: true }) as string[]) {
      if (entry.endsWith('.md')) documents.push(join('docs', entry));
    }
  }
  for (const app of readdirSync(join(repositoryRoot, 'apps'))) {
    if (existsSync(join(repositoryRoot, 'apps', app, 'README.md')))
      documents.push(join('apps', app, 'README.md'));
  }
  return documents.sort();
}
