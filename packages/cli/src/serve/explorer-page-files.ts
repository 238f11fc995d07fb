// The page's static files, read once when the explorer starts, and the page a browser gets for a
// refused request. Split from explorer-server.ts, which serves them.
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the page's static files are: `explorer-page/` of this package, from `src/serve` or `dist/serve`. */
export const pageDirectory = fileURLToPath(new URL('../../explorer-page/', import.meta.url));

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The files of {@link pageDirectory} the explorer serves (those of a known type), by name. */
export async function pageFiles(): Promise<Map<string, { type: string; body: Buffer }>> {
  const files = new Map<string, { type: string; body: Buffer }>();
  for (const name of await readdir(pageDirectory)) {
    const type = contentTypes[extname(name)];
    if (type) files.set(name, { type, body: await readFile(join(pageDirectory, name)) });
  }
  return files;
}

/** The page a browser gets for a refused request: the reason as text, no script. */
export function refusalPage(message: string): string {
  const text = message.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>crewline lineage explorer</title></head><body><h1>crewline lineage explorer</h1><p>${text}</p></body></html>`;
}
