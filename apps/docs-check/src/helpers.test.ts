import { describe, expect, it } from 'vitest';
import { codeBlocks, localLinks, snippetMarker } from './markdown-blocks.js';
import { snippetText } from './regions.js';
import { shellCommands, shellWords } from './shell-words.js';

describe('codeBlocks', () => {
  it('finds fenced blocks with their language, line and the marker line above', () => {
    const markdown = [
      '# Title',
      '',
      '<!-- snippet: a.ts#x -->',
      '```ts',
      'const a = 1;',
      '```',
      '',
      '~~~bash',
      'ls',
      '~~~',
    ].join('\n');
    expect(codeBlocks(markdown)).toEqual([
      { language: 'ts', content: 'const a = 1;', line: 4, before: '<!-- snippet: a.ts#x -->' },
      { language: 'bash', content: 'ls', line: 8, before: '```' },
    ]);
  });
});

describe('snippetMarker', () => {
  it('reads a path and an optional region, and nothing else', () => {
    expect(snippetMarker('<!-- snippet: apps/x/a.ts#run -->')).toEqual({
      path: 'apps/x/a.ts',
      region: 'run',
    });
    expect(snippetMarker('<!-- snippet: apps/x/a.ts -->')).toEqual({ path: 'apps/x/a.ts' });
    expect(snippetMarker('<!-- a comment -->')).toBeUndefined();
  });
});

describe('localLinks', () => {
  it('keeps relative links without anchors and drops web links and anchors', () => {
    expect(localLinks('[a](docs/x.md#y) [b](https://e.com) [c](#top) [d](../r.md)')).toEqual([
      'docs/x.md',
      '../r.md',
    ]);
  });
});

describe('snippetText', () => {
  const source = [
    '// #region a',
    "import { x } from 'x';",
    '// #endregion a',
    'const hidden = 1;',
    'function f() {',
    '  // #region a',
    '  return x;',
    '  // #region b',
    '  // #endregion b',
    '  // #endregion a',
    '}',
  ].join('\n');

  it('joins the fragments of a region, dedented, and hides other markers', () => {
    expect(snippetText(source, 'a')).toBe("import { x } from 'x';\n\nreturn x;");
  });

  it('is undefined for a region that is not there, and the whole text without a region', () => {
    expect(snippetText(source, 'missing')).toBeUndefined();
    expect(snippetText('\n\nconst a = 1;\n\n')).toBe('const a = 1;');
  });
});

describe('shellWords', () => {
  it('splits like a shell: quotes group, comments end the line', () => {
    expect(shellWords(`pnpm demo --edit-research "two words" --x 'it''s' # note`)).toEqual([
      'pnpm',
      'demo',
      '--edit-research',
      'two words',
      '--x',
      'its',
    ]);
    expect(shellWords('a --set-output 1="b c"')).toEqual(['a', '--set-output', '1=b c']);
    expect(shellWords('ref.db#id')).toEqual(['ref.db#id']);
  });

  it('splits a block into commands at new lines and &&', () => {
    expect(shellCommands('# comment\n$ a b && c\n\nd')).toEqual([['a', 'b'], ['c'], ['d']]);
  });
});

describe('withBenchTables', () => {
  it('replaces a marked table with the first table of the file it names, or the one its marker numbers', async () => {
    const { mkdtempSync, writeFileSync, mkdirSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { withBenchTables } = await import('./bench-tables.js');
    const root = mkdtempSync(join(tmpdir(), 'bench-tables-'));
    try {
      mkdirSync(join(root, 'results'));
      writeFileSync(join(root, 'results/a.md'), '# A\n\n| x | y |\n| - | - |\n| 1 | 2 |\n\ntext\n');
      const markdown = 'intro\n<!-- bench: results/a.md -->\n| x | y |\n| - | - |\n| 0 | 0 |\n\nafter\n';
      expect(withBenchTables(markdown, root)).toBe(
        'intro\n<!-- bench: results/a.md -->\n| x | y |\n| - | - |\n| 1 | 2 |\n\nafter\n',
      );
      expect(withBenchTables('<!-- bench: results/missing.md -->\n| 0 |\n', root)).toBe(
        '<!-- bench: results/missing.md -->\n| 0 |\n',
      );
      writeFileSync(join(root, 'results/b.md'), '| x |\n| - |\n| 1 |\n\ntext\n\n| z |\n| - |\n| 3 |\n');
      expect(withBenchTables('<!-- bench: results/b.md table 2 -->\n| z |\n| - |\n| 0 |\n', root)).toBe(
        '<!-- bench: results/b.md table 2 -->\n| z |\n| - |\n| 3 |\n',
      );
      expect(withBenchTables('<!-- bench: results/b.md -->\n| x |\n| - |\n| 0 |\n', root)).toBe(
        '<!-- bench: results/b.md -->\n| x |\n| - |\n| 1 |\n',
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('withSnippetBlocks', () => {
  it('replaces a marked TypeScript block with the current region of its file', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { withSnippetBlocks } = await import('./snippet-blocks.js');
    const root = mkdtempSync(join(tmpdir(), 'snippet-blocks-'));
    try {
      writeFileSync(
        join(root, 'a.ts'),
        'setup();\n// #region shown\nconst value = 2;\n// #endregion shown\n',
      );
      const markdown =
        'text\n<!-- snippet: a.ts#shown -->\n```ts\nconst value = 1;\n```\nmore\n```ts\nleft();\n```\n';
      expect(withSnippetBlocks(markdown, root)).toBe(
        'text\n<!-- snippet: a.ts#shown -->\n```ts\nconst value = 2;\n```\nmore\n```ts\nleft();\n```\n',
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
