import { type CodeBlock, codeBlocks } from './markdown-blocks.js';
import { shellCommands } from './shell-words.js';

/** The file a `<!-- file: name -->` marker names: the block below it is that whole file of the page. */
export function fileMarker(line: string): string | undefined {
  return /^<!--\s*file:\s*([\w./-]+)\s*-->$/.exec(line)?.[1];
}

/** `<!-- run -->` above a shell block: the reader runs its commands, in the page's directory, in order. */
export function isRunMarker(line: string): boolean {
  return /^<!--\s*run\s*-->$/.test(line);
}

/** A step of a page a reader follows: the commands of one `<!-- run -->` block and what it prints. */
export interface PageStep {
  block: CodeBlock;
  commands: string[][];
  /** The `text` block right after it: what the commands print (`…` stands for anything). */
  shown: string | undefined;
}

/** What a page asks its reader to create and run. */
export interface RunnablePage {
  files: { name: string; content: string; block: CodeBlock }[];
  steps: PageStep[];
}

/** The files and steps of a page, or undefined when it has no `<!-- file: -->` blocks. */
export function runnablePage(markdown: string): RunnablePage | undefined {
  const blocks = codeBlocks(markdown);
  const files: RunnablePage['files'] = [];
  const steps: PageStep[] = [];
  blocks.forEach((block, index) => {
    const name = fileMarker(block.before);
    if (name !== undefined) files.push({ name, content: `${block.content.replace(/\s+$/, '')}\n`, block });
    if (isRunMarker(block.before)) {
      const next = blocks[index + 1];
      steps.push({
        block,
        commands: shellCommands(block.content),
        shown: next && next.language === 'text' && next.before === '```' ? next.content : undefined,
      });
    }
  });
  return files.length === 0 ? undefined : { files, steps };
}

/**
 * The lines a step's shown output promises, as patterns to find in order in what it printed: `…`
 * matches anything, a date and time matches any, and a line that is only `…` promises nothing.
 */
export function shownLinePatterns(shown: string): RegExp[] {
  return shown
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '' && line.trim() !== '…')
    .map((line) => {
      const escaped = line
        .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        .replaceAll('…', '.*')
        .replace(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/g, '\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}');
      return new RegExp(`^${escaped.replace(/ {2,}/g, ' +')}$`);
    });
}

/** The first pattern not found, in order, among `output`'s lines (undefined when all are). */
export function firstMissingLine(output: string, patterns: RegExp[]): RegExp | undefined {
  const lines = output.split('\n').map((line) => line.trimEnd());
  let from = 0;
  for (const pattern of patterns) {
    const found = lines.findIndex((line, index) => index >= from && pattern.test(line));
    if (found < 0) return pattern;
    from = found + 1;
  }
  return undefined;
}
