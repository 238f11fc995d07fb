import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A `<!-- bench: bench/results/x.md -->` marker: the table below it is copied from that file. */
export function benchMarker(line: string): string | undefined {
  return /^<!--\s*bench:\s*(\S+)\s*-->$/.exec(line.trim())?.[1];
}

/**
 * Whether benchmark results are there to be copied: the file exists and, in a git checkout, is
 * committed. Results someone has just produced but not committed yet do not count, so a clean clone
 * and a working tree judge the documents the same way.
 */
export function resultsAvailable(repositoryRoot: string, path: string): boolean {
  if (!existsSync(join(repositoryRoot, path))) return false;
  const git = spawnSync('git', ['ls-files', '--error-unmatch', '--', path], { cwd: repositoryRoot });
  if (git.error || git.status === 128) return true; // not a git checkout: the file is all there is
  return git.status === 0;
}

/** The first markdown table of a text, as lines. */
export function firstTable(text: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  if (start < 0) return [];
  let end = start;
  while (end < lines.length && lines[end]!.startsWith('|')) end += 1;
  return lines.slice(start, end);
}

/**
 * The markdown with every marked table replaced by the first table of the results file it names
 * (files that do not exist leave their table as it is).
 */
export function withBenchTables(markdown: string, repositoryRoot: string): string {
  const lines = markdown.split('\n');
  const output: string[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    output.push(line);
    const path = benchMarker(line);
    if (path === undefined) continue;
    const file = join(repositoryRoot, path);
    if (!resultsAvailable(repositoryRoot, path)) continue;
    let end = index + 1;
    while (end < lines.length && lines[end]!.startsWith('|')) end += 1;
    output.push(...firstTable(readFileSync(file, 'utf8')));
    index = end - 1;
  }
  return output.join('\n');
}
