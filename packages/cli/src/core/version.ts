import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** This package's version, read from its package.json (one level above both src/ and dist/). */
export function cliVersion(): string {
  if (cached === undefined) {
    try {
      const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
      cached = (JSON.parse(text) as { version?: string }).version ?? 'unknown';
    } catch {
      cached = 'unknown';
    }
  }
  return cached;
}
