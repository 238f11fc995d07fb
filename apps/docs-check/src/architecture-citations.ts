/** A name that ARCHITECTURE.md says is defined in a file: `name` in `path`. */
export interface Citation {
  name: string;
  path: string;
}

const repositoryPath = /^(?:packages|apps|bench)\/[\w./-]+$/;
const identifier = '`[A-Za-z_$][\\w$.]*`';
// `a` in `path`, and lists before one `in`: `a`, `b` in `path` or `a` / `b` in `path`.
const citation = new RegExp(
  `((?:${identifier}\\s*(?:,|/|and)\\s*)*${identifier})\\s+in\\s+\`((?:packages|apps|bench)/[^\`]+)\``,
  'g',
);

/** Every repository path written in backticks (`packages/...`, `apps/...`, `bench/...`). */
export function citedPaths(markdown: string): string[] {
  const paths = [...markdown.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!);
  return [...new Set(paths.filter((path) => repositoryPath.test(path)))];
}

/**
 * Every `name` in `path` pair. Line breaks count as spaces, so a pair may wrap. For `Class.method`
 * the name looked for in the file is `method`.
 */
export function citations(markdown: string): Citation[] {
  const text = markdown.replace(/\s+/g, ' ');
  const found: Citation[] = [];
  for (const match of text.matchAll(citation)) {
    const path = match[2]!;
    for (const name of match[1]!.matchAll(/`([^`]+)`/g)) found.push({ name: name[1]!, path });
  }
  return found;
}

/** The part of a cited name a file must contain: the last segment of `Class.method`. */
export function definedName(name: string): string {
  return name.split('.').at(-1)!;
}
