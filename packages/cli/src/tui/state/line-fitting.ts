import { printable } from '../../core/format.js';
import type { Line, Segment } from './panels.js';
import { fitColumns, graphemeColumns, graphemes, textColumns } from './terminal-columns.js';

// Fitting text to the rows and columns of a panel: every line of the screen is cut (clipLine),
// wrapped (wrapText) or windowed here.

/**
 * `line` cut to `width` terminal columns (keeping styles), a segment marked `shrink` shortened first
 * (see shrinkToFit), then padded with spaces when `pad`. Columns are counted as the terminal draws
 * them (see terminal-columns.ts: CJK and emoji take two, combining marks none) and text is cut
 * between whole graphemes, so a wide branch name neither pushes the separator out of place nor is
 * cut inside an emoji sequence. Every line of the screen passes through here, so this is where
 * control characters of stored strings (a tampered checkpoint's trigger, a model's output) are
 * escaped: they would move the cursor or clear the screen, and a tab or line feed would break the
 * layout.
 */
export function clipLine(line: Line, width: number, pad = false): Line {
  const result: Segment[] = [];
  let remaining = width;
  for (const segment of shrinkToFit(line.map(printableSegment), width)) {
    if (remaining <= 0) break;
    const columns = textColumns(segment.text);
    if (columns <= remaining) {
      result.push(segment);
      remaining -= columns;
      continue;
    }
    // The cut is marked with ~; a wide character that would straddle the edge leaves a column to pad.
    const kept = fitColumns(segment.text, remaining - 1);
    result.push({ ...segment, text: `${kept.text}~` });
    remaining -= kept.columns + 1;
    break;
  }
  if (pad && remaining > 0) result.push({ text: ' '.repeat(remaining) });
  return result;
}

function printableSegment(segment: Segment): Segment {
  const text = printable(segment.text, false);
  return text === segment.text ? segment : { ...segment, text };
}

/** The fewest columns a shrunk segment keeps, its `~` included: less would name nothing. */
const shortestShrunk = 4;

/**
 * `line` with its first `shrink` segment shortened (see shortenName) by as many columns as the line
 * is wider than `width`, so that what follows it fits; it keeps at least {@link shortestShrunk}
 * columns, and clipLine cuts the end of what still does not fit.
 */
function shrinkToFit(line: Line, width: number): Line {
  const widths = line.map((segment) => textColumns(segment.text));
  const overflow = widths.reduce((sum, columns) => sum + columns, 0) - width;
  const index = line.findIndex((segment) => segment.shrink === true);
  if (overflow <= 0 || index < 0 || widths[index]! <= shortestShrunk) return line;
  const segment = line[index]!;
  const text = shortenName(segment.text, Math.max(shortestShrunk, widths[index]! - overflow));
  return line.map((original, position) => (position === index ? { ...segment, text } : original));
}

/**
 * `name` in at most `columns` columns, the part cut out marked with `~`, keeping what tells names
 * apart: of a branch name with a `/` (`flow-states/<state id>`, `feature/<topic>`), the start of what
 * follows the last `/`, after a few columns of what comes before it (`fl~6f0d8a` for
 * `flow-states/6f0d8a52-…`: every state's lane would be `flow-sta~` if cut at its end); of another
 * name, its start and its end (`try-the~sources`).
 */
export function shortenName(name: string, columns: number): string {
  if (textColumns(name) <= columns) return name;
  const budget = Math.max(0, columns - 1);
  const slash = name.lastIndexOf('/');
  const last = slash > 0 ? name.slice(slash + 1) : '';
  if (last !== '') {
    const lastColumns = textColumns(last);
    const headColumns = lastColumns < budget ? budget - lastColumns : Math.max(1, Math.floor(budget / 3));
    const head = fitColumns(name.slice(0, slash), headColumns);
    return `${head.text}~${fitColumns(last, budget - head.columns).text}`;
  }
  const head = fitColumns(name, Math.ceil(budget / 2));
  return `${head.text}~${fitColumns(name, budget - head.columns, true).text}`;
}

/**
 * Hard-wraps text (keeping its line breaks) to `width` terminal columns, counted and cut as clipLine
 * counts and cuts them (whole graphemes, CJK and emoji two columns): a line wrapped by characters
 * would be up to twice as wide as the panel and cut again there. A wide character that would straddle
 * the edge starts the next line. What is wrapped is the text as the screen shows it, its control
 * characters escaped (`\x1b`, four columns, where ESC itself counts none): wrapped raw, a run
 * output with colour codes made lines too wide, cut again by clipLine and their end lost. Lines end
 * between words where they can, only a word wider than the line is cut: everything wrapped is read
 * (a plan, a warning, a run's error and output, a paused flow's question), and an error cut inside
 * its words was hard to read and to copy (task h2 #4).
 */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n').map((line) => printable(line, false))) {
    if (paragraph === '') {
      lines.push('');
      continue;
    }
    // Graphemes of the line being filled, with their columns; lines before firstLine are of other paragraphs.
    const firstLine = lines.length;
    let line: { text: string; columns: number }[] = [];
    let used = 0;
    for (const grapheme of graphemes(paragraph)) {
      const columns = graphemeColumns(grapheme);
      if (used + columns > width && line.length > 0) {
        // The line ends at a space (dropped): the one that does not fit, else the line's last one
        // after its start, the word after it going on the next line; a word wider than the line is cut.
        const atSpace = grapheme === ' ';
        const space = atSpace ? -1 : line.findLastIndex((part) => part.text === ' ');
        const kept = space > 0 ? line.slice(0, space) : line;
        // Nor does it end with the spaces before that one (two after a full stop).
        while (space > 0 && kept.at(-1)?.text === ' ') kept.pop();
        const carried = space > 0 ? line.slice(space + 1) : [];
        lines.push(kept.map((part) => part.text).join(''));
        line = carried;
        used = carried.reduce((sum, part) => sum + part.columns, 0);
        if (atSpace) continue;
      }
      // Spaces at the start of a wrapped line are dropped with the one the line broke at:
      // 'abc  def' in 3 columns was 'abc', ' de', 'f' (task h8 #4).
      if (grapheme === ' ' && line.length === 0 && lines.length > firstLine) continue;
      line.push({ text: grapheme, columns });
      used += columns;
    }
    lines.push(line.map((part) => part.text).join(''));
  }
  return lines;
}

/** The slice of `lines` of `height` rows that keeps row `focus` in view (the focus near the middle). */
export function windowAround<T>(
  lines: readonly T[],
  focus: number,
  height: number,
): { start: number; rows: T[] } {
  if (lines.length <= height) return { start: 0, rows: [...lines] };
  const start = Math.max(0, Math.min(lines.length - height, focus - Math.floor(height / 3)));
  return { start, rows: lines.slice(start, start + height) };
}

/** `items` joined by `separator`, a new line started where the next one would pass `width` columns. */
export function packWords(items: readonly string[], width: number, separator = '  '): string[] {
  const lines: string[] = [];
  for (const item of items) {
    const last = lines.at(-1);
    if (last !== undefined && textColumns(`${last}${separator}${item}`) <= width)
      lines[lines.length - 1] = `${last}${separator}${item}`;
    else lines.push(item);
  }
  return lines;
}
