import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const sourceRoot = fileURLToPath(new URL('.', import.meta.url));
// What is published (tsconfig.build.json leaves these out).
const unpublished = new Set(['test-support', 'e2e', 'examples']);

function publishedSources(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return unpublished.has(entry.name) ? [] : publishedSources(path);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Statements at a module's top level that call a function, each as `file: text`. */
function topLevelCalls(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  return source.statements
    .filter((statement) => ts.isExpressionStatement(statement))
    .filter((statement) => ts.isCallExpression((statement as ts.ExpressionStatement).expression))
    .map((statement) => `${relative(sourceRoot, file)}: ${statement.getText(source).split('\n')[0]}`);
}

describe('@crewline/runtime declares "sideEffects": false', () => {
  it('so no published module registers anything as it loads (a bundler may drop such a module)', () => {
    const calls = publishedSources(sourceRoot).flatMap(topLevelCalls);
    expect(calls).toEqual([]);
  });
});
