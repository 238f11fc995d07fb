import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { snippetMarker } from './markdown-blocks.js';
import { snippetText } from './regions.js';

/**
 * The markdown with every TypeScript block under a `<!-- snippet: path#region -->` marker replaced
 * by the current text of that file or region (blocks whose source is missing are left as they are).
 */
export function withSnippetBlocks(markdown: string, repositoryRoot: string): string {
  const lines = markdown.split('\n');
  const output: string[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    output.push(line);
    const marker = snippetMarker(line.trim());
    const fence = lines[index + 1];
    if (!marker || fence === undefined || !/^```(ts|typescript|tsx)\s*$/.test(fence)) continue;
    const file = join(repositoryRoot, marker.path);
    const text = existsSync(file) ? snippetText(readFileSync(file, 'utf8'), marker.region) : undefined;
    let end = index + 2;
    while (end < lines.length && !lines[end]!.startsWith('```')) end += 1;
    if (text === undefined || end >= lines.length) continue;
    output.push(fence, ...text.split('\n'), lines[end]!);
    index = end;
  }
  return output.join('\n');
}
