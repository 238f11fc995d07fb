import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { citations, citedPaths, definedName } from './architecture-citations.js';
import { repositoryRoot } from './documents.js';

const architecture = readFileSync(join(repositoryRoot, 'ARCHITECTURE.md'), 'utf8');

describe('ARCHITECTURE.md', () => {
  it('cites only paths that exist', () => {
    const paths = citedPaths(architecture);
    expect(paths.length).toBeGreaterThan(40);
    expect(paths.filter((path) => !existsSync(join(repositoryRoot, path)))).toEqual([]);
  });

  it('cites each function, class or method in the file that defines it', () => {
    const cited = citations(architecture);
    expect(cited.length).toBeGreaterThan(50);
    const missing = cited.filter(({ name, path }) => {
      const file = join(repositoryRoot, path);
      if (!existsSync(file) || statSync(file).isDirectory()) return true;
      return !new RegExp(`\\b${definedName(name).replace(/\$/g, '\\$')}\\b`).test(readFileSync(file, 'utf8'));
    });
    expect(missing).toEqual([]);
  });

  it('is linked from the root README', () => {
    expect(readFileSync(join(repositoryRoot, 'README.md'), 'utf8')).toContain('](ARCHITECTURE.md)');
  });
});

describe('citations', () => {
  it('reads single names, lists and pairs that wrap a line', () => {
    const markdown = [
      '`a` in `packages/x/a.ts`; `b`, `c` in `packages/x/b.ts` and `d` / `E.f` in',
      '   `apps/y/d.ts`; `not` a pair, `packages/z` alone.',
    ].join('\n');
    expect(citations(markdown)).toEqual([
      { name: 'a', path: 'packages/x/a.ts' },
      { name: 'b', path: 'packages/x/b.ts' },
      { name: 'c', path: 'packages/x/b.ts' },
      { name: 'd', path: 'apps/y/d.ts' },
      { name: 'E.f', path: 'apps/y/d.ts' },
    ]);
    expect(citedPaths(markdown)).toEqual(['packages/x/a.ts', 'packages/x/b.ts', 'apps/y/d.ts', 'packages/z']);
    expect(definedName('E.f')).toBe('f');
  });
});
