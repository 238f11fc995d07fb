/** A fenced code block of a markdown file. */
export interface CodeBlock {
  /** The language after the opening fence (`ts`, `bash`, `text`...), lower-cased; '' when none. */
  language: string;
  /** The block's text, without the fences. */
  content: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The last non-empty line before the opening fence (where markers such as `<!-- snippet: ... -->` go). */
  before: string;
}

/** Every fenced block (``` or ~~~) of a markdown text, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  let index = 0;
  while (index < lines.length) {
    const opening = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[index]!);
    if (!opening) {
      index += 1;
      continue;
    }
    const fence = opening[2]!;
    const start = index;
    const body: string[] = [];
    index += 1;
    while (index < lines.length && !lines[index]!.trimStart().startsWith(fence)) {
      body.push(lines[index]!);
      index += 1;
    }
    let previous = start - 1;
    while (previous >= 0 && lines[previous]!.trim() === '') previous -= 1;
    blocks.push({
      language: opening[3]!.toLowerCase(),
      content: body.join('\n'),
      line: start + 1,
      before: previous >= 0 ? lines[previous]!.trim() : '',
    });
    index += 1;
  }
  return blocks;
}

/** The file (and region) a `<!-- snippet: path#region -->` marker names, or undefined without one. */
export function snippetMarker(line: string): { path: string; region?: string } | undefined {
  const match = /^<!--\s*snippet:\s*([^#\s]+)(?:#([\w-]+))?\s*-->$/.exec(line);
  if (!match) return undefined;
  return { path: match[1]!, ...(match[2] !== undefined ? { region: match[2] } : {}) };
}

/** Relative links of a markdown text (`[text](path)`), without anchors; web links are left out. */
export function localLinks(markdown: string): string[] {
  const links: string[] = [];
  for (const match of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1]!;
    if (/^[a-z]+:/i.test(target) || target.startsWith('#')) continue;
    links.push(target.split('#')[0]!);
  }
  return links;
}
