/**
 * The code a snippet shows: a whole file, or a named region of it. A region is the lines between
 * `// #region name` and `// #endregion name`; a region may be split into several fragments (for
 * example its import at the top of the file and its code further down), which are joined with a
 * blank line. Fragments are dedented; leading and trailing blank lines are dropped.
 */
export function snippetText(source: string, region?: string): string | undefined {
  if (region === undefined) return trimBlankLines(source.split('\n')).join('\n');
  const fragments: string[][] = [];
  let current: string[] | undefined;
  for (const line of source.split('\n')) {
    const marker = /^\s*\/\/\s*#(region|endregion)\s+([\w-]+)\s*$/.exec(line);
    if (marker) {
      if (marker[2] !== region) continue;
      if (marker[1] === 'region') current = [];
      else if (current) {
        fragments.push(current);
        current = undefined;
      }
      continue;
    }
    // Markers of other regions inside this one are not shown.
    if (current && !/^\s*\/\/\s*#(region|endregion)\b/.test(line)) current.push(line);
  }
  if (fragments.length === 0) return undefined;
  return fragments.map((fragment) => dedent(trimBlankLines(fragment)).join('\n')).join('\n\n');
}

function trimBlankLines(lines: string[]): string[] {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start]!.trim() === '') start += 1;
  while (end > start && lines[end - 1]!.trim() === '') end -= 1;
  return lines.slice(start, end);
}

function dedent(lines: string[]): string[] {
  const indents = lines.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)![0].length);
  const common = indents.length === 0 ? 0 : Math.min(...indents);
  return lines.map((line) => line.slice(common));
}
