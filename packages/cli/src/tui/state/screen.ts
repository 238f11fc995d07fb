import { printable } from '../../core/format.js';
import type { BrowserState, Tab } from './browser-state.js';
import {
  helpLines,
  inputLines,
  type Line,
  overviewLines,
  plain,
  type Segment,
  taskLines,
  treeRowLine,
} from './panels.js';
import { editsFor, selectedCheckpoint } from './selection.js';
import { fitColumns, graphemeColumns, graphemes, textColumns } from './terminal-columns.js';
import { visibleRows } from './tree.js';

export interface ScreenSize {
  width: number;
  height: number;
  /** "Now" for relative times. Default `Date.now()`. */
  now?: number;
}

/** Smallest screen the browser lays out for; smaller terminals get a clipped 80×24 layout. */
export const MINIMUM_SIZE = { width: 60, height: 12 } as const;

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
    // Graphemes of the line being filled, with their columns.
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
        const carried = space > 0 ? line.slice(space + 1) : [];
        lines.push(kept.map((part) => part.text).join(''));
        line = carried;
        used = carried.reduce((sum, part) => sum + part.columns, 0);
        if (atSpace) continue;
      }
      line.push({ text: grapheme, columns });
      used += columns;
    }
    lines.push(line.map((part) => part.text).join(''));
  }
  return lines;
}

/** The slice of `lines` of `height` rows that keeps row `focus` in view (the focus near the middle). */
function windowAround<T>(lines: readonly T[], focus: number, height: number): { start: number; rows: T[] } {
  if (lines.length <= height) return { start: 0, rows: [...lines] };
  const start = Math.max(0, Math.min(lines.length - height, focus - Math.floor(height / 3)));
  return { start, rows: lines.slice(start, start + height) };
}

const tabTitles: Record<Tab, string> = { overview: 'Overview', tasks: 'Tasks', inputs: 'Inputs' };

function treePanel(state: BrowserState, width: number, height: number, now: number): Line[] {
  if (state.listStatus === 'error')
    return [
      [{ text: 'could not list checkpoints:', color: 'red' }],
      ...wrapText(state.listError ?? '', width).map(plain),
    ];
  if (state.listStatus === 'loading' && state.tree.length === 0) return [plain('loading...')];
  if (state.tree.length === 0)
    return [
      plain('no checkpoints here yet'),
      plain(''),
      plain('run something with'),
      plain('checkpointing enabled,'),
      plain('then press r'),
    ];
  const rows = visibleRows(state.tree, state.collapsed);
  const selected = Math.max(
    0,
    rows.findIndex((row) => row.node.key === state.selectedKey),
  );
  const edited = new Set(
    Object.entries(state.edits)
      .filter(([, edits]) => Object.keys(edits.outputs).length + Object.keys(edits.inputs).length > 0)
      .map(([id]) => id),
  );
  const { start, rows: shown } = windowAround(rows, selected, height);
  return shown.map((row, offset) => {
    const isSelected = start + offset === selected && row.node.key === state.selectedKey;
    const line = treeRowLine(row, edited, now);
    if (!isSelected) return [{ text: ' ' }, ...line];
    // The `>` marker keeps the selection visible without colour (NO_COLOR, dumb terminals).
    const focused = state.focus === 'tree';
    return [
      { text: '>', bold: true },
      ...line.map((segment) => ({ ...segment, inverse: focused, bold: true })),
    ];
  });
}

function itemWindow(
  content: { lines: Line[]; itemStarts: number[] },
  cursor: number,
  height: number,
  focused: boolean,
): Line[] {
  const start = content.itemStarts[cursor] ?? 0;
  const end = content.itemStarts[cursor + 1] ?? content.lines.length;
  const marked = content.lines.map((line, index): Line => {
    const inItem = content.itemStarts.length > 0 && index >= start && index < end;
    if (!inItem) return [{ text: '  ' }, ...line];
    return [
      { text: index === start ? '> ' : '  ', bold: true },
      ...(index === start && focused ? line.map((segment) => ({ ...segment, inverse: true })) : line),
    ];
  });
  return windowAround(marked, start, height).rows;
}

/**
 * The editor's text wrapped to `width` as wrapText wraps it (control characters escaped, whole
 * graphemes, line breaks kept), and where its cursor is drawn: the row, the offset in it and the
 * text of the grapheme under the cursor (one the cursor is inside of too), a space on a line break or
 * after the end. Both come from one walk over the whole text: wrapping the text up to the cursor
 * apart broke a grapheme there (❤ without its selector is one column, ❤️ two) and put the cursor on
 * another row than its character.
 */
function editorRows(
  text: string,
  cursor: number,
  width: number,
): { rows: string[]; cursor: { row: number; start: number; text: string } } {
  const rows: string[] = [];
  let line = '';
  let used = 0;
  let at = 0;
  let drawn: { row: number; start: number; text: string } | undefined;
  const add = (shown: string, underCursor: boolean): void => {
    const columns = textColumns(shown);
    if (used + columns > width && line !== '') {
      rows.push(line);
      line = '';
      used = 0;
    }
    if (underCursor) drawn = { row: rows.length, start: line.length, text: shown };
    line += shown;
    used += columns;
  };
  for (const grapheme of graphemes(text)) {
    const size = Array.from(grapheme).length;
    const underCursor = drawn === undefined && cursor < at + size;
    if (grapheme === '\n') {
      if (underCursor) add(' ', true);
      rows.push(line);
      line = '';
      used = 0;
    } else {
      add(printable(grapheme, false), underCursor);
    }
    at += size;
  }
  if (drawn === undefined) add(' ', true);
  rows.push(line);
  return { rows, cursor: drawn ?? { row: rows.length - 1, start: line.length, text: ' ' } };
}

/**
 * What Enter does in the editor or confirmation open, in the words the editor's header and the key
 * line both use (they said "enter save" and "enter confirm" for the same key).
 */
function enterWord(state: BrowserState): string {
  const kind = state.editor?.target.kind;
  if (kind === 'branch') return 'fork';
  if (kind === 'answer') return 'answer and continue';
  if (kind !== undefined) return 'save';
  return state.confirm?.mode ?? 'confirm';
}

function editorPanel(state: BrowserState, width: number, height: number): Line[] {
  const editor = state.editor!;
  const target = editor.target;
  const title =
    target.kind === 'output'
      ? `Edit output of task ${target.index + 1}`
      : target.kind === 'input'
        ? `Edit input ${target.key}`
        : target.kind === 'answer'
          ? `Answer: ${state.run?.result?.pause?.message ?? ''}`
          : // At 80 columns the detail panel is 43 wide: "name the new branch (empty = generated)" was cut.
            'Fork: new branch name (empty = generated)';
  const { rows, cursor } = editorRows(editor.buffer.text, editor.buffer.cursor, width);
  // The cursor is drawn as an inverse character so it shows without colour support.
  const body: Line[] = rows.map((text, row) =>
    row !== cursor.row
      ? plain(text)
      : [
          { text: text.slice(0, cursor.start) },
          { text: cursor.text, inverse: true },
          { text: text.slice(cursor.start + cursor.text.length) },
        ],
  );
  const keys = [`enter ${enterWord(state)}`, 'esc cancel'];
  if (target.kind !== 'branch') keys.push('ctrl+j new line', 'ctrl+u clear to start', 'ctrl+k clear to end');
  // On as many lines as the width needs (two in the 43 columns of the detail panel at 80): the help
  // is out of reach in an editor, where `?` is text.
  const hint = packWords(keys, width).map((text): Line => [{ text, color: 'gray' }]);
  const visible = windowAround(body, cursor.row, Math.max(1, height - 2 - hint.length)).rows;
  return [[{ text: title, bold: true }], ...hint, plain(''), ...visible];
}

/** `items` joined by `separator`, a new line started where the next one would pass `width` columns. */
function packWords(items: readonly string[], width: number, separator = '  '): string[] {
  const lines: string[] = [];
  for (const item of items) {
    const last = lines.at(-1);
    if (last !== undefined && textColumns(`${last}${separator}${item}`) <= width)
      lines[lines.length - 1] = `${last}${separator}${item}`;
    else lines.push(item);
  }
  return lines;
}

/**
 * What the resume or fork confirmation says, without its key line: the checkpoint, the edits, and
 * what the plan says of resuming an older checkpoint.
 */
export function confirmLines(state: BrowserState, width: number): Line[] {
  const confirm = state.confirm!;
  const edits = editsFor(state, confirm.checkpointId);
  const outputs = Object.keys(edits.outputs).map((index) => Number(index) + 1);
  const inputs = Object.keys(edits.inputs);
  const lines: Line[] = [
    [{ text: confirm.mode === 'resume' ? 'Resume this checkpoint?' : 'Fork this checkpoint?', bold: true }],
    plain(`  from ${confirm.checkpointId}`),
  ];
  if (confirm.mode === 'fork') lines.push(plain(`  onto branch ${confirm.branch || '(generated)'}`));
  lines.push(
    plain(
      `  edited outputs: ${outputs.length > 0 ? outputs.map((number) => `task ${number}`).join(', ') : 'none'}`,
    ),
  );
  lines.push(plain(`  edited inputs: ${inputs.length > 0 ? inputs.join(', ') : 'none'}`));
  if (outputs.length > 0) lines.push(plain(`  every task after task ${Math.min(...outputs)} runs again`));
  // An older checkpoint of its run: a new branch, and the work done since paid for again.
  const plan = confirm.plan;
  const said =
    plan?.status === 'checking' ? 'checking what the run did after this checkpoint...' : plan?.note;
  if (said !== undefined) {
    lines.push(plain(''));
    for (const text of wrapText(said, Math.max(1, width - 2)))
      lines.push([{ text: `  ${text}`, color: plan?.status === 'checking' ? 'gray' : 'yellow' }]);
  }
  return lines;
}

/**
 * The most rows the confirmation scrolls (see confirmKey): its lines but one in the narrowest detail
 * panel, the minimum layout's, where it wraps to the most lines. The state has no screen size, so on
 * a wider screen it can scroll past the end: the panel stops at its last rows (as the Overview tab).
 */
export function confirmScrollLimit(state: BrowserState): number {
  const width = MINIMUM_SIZE.width - 1;
  return confirmLines(state, width - Math.max(28, Math.floor(width * 0.42)) - 3).length - 1;
}

/**
 * The confirmation in `height` rows, its key line always on the last ones: at 80×14 the plan's
 * warning filled the panel and the keys to press were cut. When it is too tall its blank lines go,
 * then the rest scrolls with j/k (`confirm.scroll`), the key line saying so.
 */
function confirmPanel(state: BrowserState, width: number, height: number): Line[] {
  const confirm = state.confirm!;
  const lines = confirmLines(state, width);
  // Enter and y wait for the plan (see confirmKey): the key line says so while it is worked out.
  const keys =
    confirm.plan?.status === 'checking'
      ? ['esc/n cancel', 'enter/y once the plan shows']
      : [`enter/y ${confirm.mode}`, ...(confirm.mode === 'fork' ? ['b branch name'] : []), 'esc/n cancel'];
  const keyLines = (items: string[]): Line[] =>
    packWords(items, width, '   ').map((text): Line => [{ text, color: 'gray' }]);
  if (lines.length + 1 + keyLines(keys).length <= height) return [...lines, plain(''), ...keyLines(keys)];
  const compact = lines.filter((line) => line.some((segment) => segment.text !== ''));
  if (compact.length + keyLines(keys).length <= height) return [...compact, ...keyLines(keys)];
  const scrolled = keyLines(['j/k more', ...keys]);
  const rows = Math.max(1, height - scrolled.length);
  const start = Math.max(0, Math.min(confirm.scroll ?? 0, compact.length - rows));
  return [...compact.slice(start, start + rows), ...scrolled];
}

function detailPanel(state: BrowserState, width: number, height: number): Line[] {
  if (state.editor) return editorPanel(state, width, height);
  if (state.confirm) return confirmPanel(state, width, height);
  const tabLine: Line = [];
  for (const tab of ['overview', 'tasks', 'inputs'] as const) {
    const active = tab === state.tab;
    tabLine.push({
      text: active ? `[${tabTitles[tab]}]` : ` ${tabTitles[tab]} `,
      bold: active,
      color: active ? 'cyan' : undefined,
    });
    tabLine.push({ text: ' ' });
  }
  const checkpoint = selectedCheckpoint(state);
  const body = height - 2;
  const header = [tabLine, [{ text: '-'.repeat(width), color: 'gray' } as Segment]];
  if (!checkpoint)
    return [...header, plain(state.tree.length > 0 ? 'select a checkpoint (enter opens it)' : '')];
  const detail = state.detail;
  if (!detail || detail.status === 'loading') return [...header, plain('loading...')];
  if (detail.status === 'error' || !detail.view) {
    return [
      ...header,
      [{ text: 'cannot read this checkpoint:', color: 'red' }],
      ...wrapText(detail.error ?? '', width).map(plain),
    ];
  }
  const edits = editsFor(state, checkpoint.id);
  const focused = state.focus === 'detail';
  if (state.tab === 'overview') {
    const lines = overviewLines(detail.view, checkpoint, edits).flatMap((line): Line[] =>
      line.length === 1 && line[0]!.wrap
        ? wrapText(line[0]!.text, width).map((text) => [{ ...line[0]!, text }])
        : [line],
    );
    const start = Math.min(state.detailCursor, Math.max(0, lines.length - body));
    return [...header, ...lines.slice(start, start + body)];
  }
  const content = state.tab === 'tasks' ? taskLines(detail.view, edits) : inputLines(detail.view, edits);
  return [...header, ...itemWindow(content, state.detailCursor, body, focused)];
}

/** The checkpoint id inside a reference (`db#id`, or a JSON file named after its id), else the reference. */
export function shortReference(reference: string): string {
  const hash = reference.lastIndexOf('#');
  if (hash >= 0) return reference.slice(hash + 1);
  const name = reference.split(/[\\/]/).at(-1) ?? reference;
  return /\d{8}T\d{9}-[0-9a-f]{8}/.exec(name)?.[0] ?? reference;
}

/** Rows of the run screen kept for its last progress lines while a message below takes the rest. */
const progressRowsKept = 3;

/**
 * At most `limit` lines of a message, cut in the middle: its start says what happened and its end
 * how to fix it (a run error ends with the option or command to use), so neither is the part cut.
 */
function middleCut(lines: readonly string[], limit: number): string[] {
  if (lines.length <= limit) return [...lines];
  const head = Math.max(1, Math.floor((limit - 1) / 3));
  return [...lines.slice(0, head), '…', ...lines.slice(lines.length - (limit - 1 - head))];
}

function runScreen(state: BrowserState, width: number, height: number): Line[] {
  const run = state.run!;
  const title: Line = [
    { text: run.mode === 'resume' ? 'Resuming ' : 'Forking ', bold: true },
    { text: run.checkpointId, bold: true },
    {
      text: run.status === 'running' ? '  running...' : run.status === 'finished' ? '  finished' : '  failed',
      color: run.status === 'running' ? 'yellow' : run.status === 'finished' ? 'green' : 'red',
      bold: true,
    },
  ];
  const tail: Line[] = [];
  // What a message below the progress may take: every row but the title, a blank, a few progress
  // lines and the message's own heading and key hint (two at most). Its first 3 or 4 wrapped lines
  // only hid, at 80×24, the end of an error, where the fix is, above rows left empty.
  const messageRows = Math.max(3, height - 2 - progressRowsKept - 2);
  const pause = run.status === 'finished' ? run.result?.pause : undefined;
  if (run.result && pause) {
    tail.push([
      { text: `Paused on branch ${run.result.branch}: ${pause.methodName} waits for an answer`, bold: true },
    ]);
    tail.push(
      ...middleCut(wrapText(pause.message.replace(/\s+/g, ' ').trim(), width), messageRows).map(plain),
    );
    tail.push([
      {
        text: pause.checkpoint
          ? 'a: answer and continue   any other key: back'
          : 'no checkpoint was written for the pause; any key: back',
        color: 'gray',
      },
    ]);
  } else if (run.status === 'finished' && run.result) {
    tail.push([{ text: `Run finished on branch ${run.result.branch}`, color: 'green', bold: true }]);
    if (run.result.lastCheckpoint)
      tail.push(plain(`last checkpoint ${shortReference(run.result.lastCheckpoint)}`));
    // The start of the output (the whole of it is in the last checkpoint).
    const output = wrapText(`output: ${run.result.output.replace(/\s+/g, ' ').trim()}`, width);
    const outputRows = messageRows - (run.result.lastCheckpoint ? 1 : 0);
    tail.push(
      ...(output.length > outputRows ? [...output.slice(0, outputRows - 1), '…'] : output).map(plain),
    );
    tail.push([{ text: 'press any key to go back to the checkpoints', color: 'gray' }]);
  } else if (run.status === 'failed') {
    tail.push(
      ...middleCut(wrapText(run.error ?? 'the run failed', width), messageRows + 1).map(
        (text): Line => [{ text, color: 'red' }],
      ),
    );
    tail.push([{ text: 'press any key to go back to the checkpoints', color: 'gray' }]);
  } else {
    tail.push([{ text: 'ctrl+c interrupts the run', color: 'gray' }]);
  }
  const room = Math.max(1, height - 2 - tail.length);
  // Wrapped, not cut: a log line (the runtime's warning that a resume moves to a new branch) is
  // longer than the progress lines, which are written to fit.
  const progress = run.lines
    .slice(-room)
    .flatMap((line) => wrapText(line, width))
    .slice(-room)
    .map(plain);
  return [
    title,
    plain(''),
    ...progress,
    ...new Array(Math.max(0, room - progress.length)).fill(0).map(() => plain('')),
    ...tail,
  ];
}

/**
 * The whole screen as lines: a title, the tree and detail side by side, a status line and key
 * hints. Never more than `height` lines nor wider than `width - 1` columns, so Ink redraws in place
 * (at 80×24 too) and a terminal never wraps a line.
 */
export function renderScreen(state: BrowserState, size: ScreenSize): Line[] {
  const width = Math.max(MINIMUM_SIZE.width, size.width) - 1;
  const height = Math.max(MINIMUM_SIZE.height, size.height) - 1;
  const now = size.now ?? Date.now();
  const count = `${state.checkpoints.length} checkpoint${state.checkpoints.length === 1 ? '' : 's'}`;
  const title = clipLine(
    [
      { text: 'crewline checkpoints', bold: true },
      { text: `  ${state.title}  ` },
      { text: `${count} (${state.providerKind})`, color: 'gray' },
    ],
    width,
  );
  const bodyHeight = height - 3;
  let body: Line[];
  if (state.run) {
    const lines = state.editor ? editorPanel(state, width, bodyHeight) : runScreen(state, width, bodyHeight);
    body = lines.map((line) => clipLine(line, width));
  } else if (state.showHelp) {
    // Help takes the whole width: at 80 columns the detail panel is too narrow for it.
    body = helpLines.slice(0, bodyHeight).map((text) => clipLine(plain(text), width));
  } else {
    const leftWidth = Math.min(44, Math.max(28, Math.floor(width * 0.42)));
    const rightWidth = width - leftWidth - 3;
    const left = treePanel(state, leftWidth, bodyHeight, now);
    const right = detailPanel(state, rightWidth, bodyHeight);
    body = [];
    for (let row = 0; row < bodyHeight; row += 1) {
      const leftLine = clipLine(left[row] ?? [], leftWidth, true);
      const rightLine = clipLine(right[row] ?? [], rightWidth);
      body.push([...leftLine, { text: ' | ', color: 'gray' }, ...rightLine]);
    }
  }
  const status: Line = state.message
    ? [{ text: state.message, color: 'yellow' }]
    : [{ text: state.focus === 'tree' ? 'tree' : `detail: ${tabTitles[state.tab]}`, color: 'gray' }];
  const keys: Line =
    state.run && !state.editor
      ? [{ text: state.run.status === 'running' ? 'ctrl+c interrupt' : 'any key: back', color: 'gray' }]
      : state.editor || state.confirm
        ? [{ text: `enter ${enterWord(state)}  esc cancel`, color: 'gray' }]
        : [
            {
              text: 'jk move  enter open  tab panel  e resume  f fork  r refresh  ? help  q quit',
              color: 'gray',
            },
          ];
  return [title, ...body, clipLine(status, width), clipLine(keys, width)].slice(0, height);
}

/** The screen as plain text (tests and the non-colour path). */
export function screenText(lines: readonly Line[]): string {
  return lines
    .map((line) =>
      line
        .map((segment) => segment.text)
        .join('')
        .trimEnd(),
    )
    .join('\n');
}
