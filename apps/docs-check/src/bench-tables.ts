import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const markerPattern = /^<!--\s*bench:\s*(\S+)(?:\s+table\s+(\d+))?\s*-->$/;

/**
 * A `<!-- bench: bench/results/x.md -->` marker: the table below it is copied from that file (its
 * first table; `<!-- bench: bench/results/x.md table 2 -->` names another one).
 */
export function benchMarker(line: string): string | undefined {
  return markerPattern.exec(line.trim())?.[1];
}

/** Which table of its results file a marker names, counted from 1. */
export function benchMarkerTable(line: string): number {
  return Number(markerPattern.exec(line.trim())?.[2] ?? 1);
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

/** The first markdown table of a text (or the `number`th, counted from 1), as lines. */
export function firstTable(text: string, number = 1): string[] {
  const lines = text.split('\n');
  let end = 0;
  for (let found = 0; found < number; found += 1) {
    const start = lines.findIndex((line, index) => index >= end && line.startsWith('|'));
    if (start < 0) return [];
    end = start;
    while (end < lines.length && lines[end]!.startsWith('|')) end += 1;
    if (found === number - 1) return lines.slice(start, end);
  }
  return [];
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
    output.push(...firstTable(readFileSync(file, 'utf8'), benchMarkerTable(line)));
    index = end - 1;
  }
  return output.join('\n');
}
