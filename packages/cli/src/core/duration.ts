import { usageError } from './cli-error.js';

const unitSeconds: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/**
 * Parses a duration such as `30s`, `15m`, `24h`, `7d`, `2w` (also combined: `1d12h`) into
 * milliseconds. Anything else is a usage error that shows the accepted form.
 */
export function parseDuration(text: string): number {
  const trimmed = text.trim().toLowerCase();
  const pattern = /(\d+(?:\.\d+)?)([smhdw])/g;
  let total = 0;
  let consumed = 0;
  for (const match of trimmed.matchAll(pattern)) {
    if (match.index !== consumed) break;
    total += Number(match[1]) * unitSeconds[match[2]!]! * 1000;
    consumed += match[0].length;
  }
  if (trimmed === '' || consumed !== trimmed.length) {
    throw usageError(
      `duration "${text}" is not understood; use a number and a unit s, m, h, d or w, e.g. 7d or 12h`,
    );
  }
  return total;
}
