import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Every markdown file whose code this package keeps honest: the root README, everything under
 * docs/, the READMEs of the apps and packages, and everything under a package's docs/.
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
  for (const name of readdirSync(join(repositoryRoot, 'packages'))) {
    const pkg = join('packages', name);
    if (existsSync(join(repositoryRoot, pkg, 'README.md'))) documents.push(join(pkg, 'README.md'));
    const packageDocs = join(repositoryRoot, pkg, 'docs');
    if (!existsSync(packageDocs)) continue;
    for (const entry of readdirSync(packageDocs, { recursive: true }) as string[]) {
      if (entry.endsWith('.md')) documents.push(join(pkg, 'docs', entry));
    }
  }
  return documents.sort();
}
