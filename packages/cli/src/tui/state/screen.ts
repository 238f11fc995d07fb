import type { BrowserState, Tab } from './browser-state.js';
import { confirmPanel } from './confirm-panel.js';
import { editorPanel, enterWord } from './editor-panel.js';
import { clipLine, windowAround, wrapText } from './line-fitting.js';
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
import { runScreen } from './run-screen.js';
import { type ScreenSize, screenLayout } from './screen-layout.js';
import { editsFor, selectedCheckpoint } from './selection.js';
import { visibleRows } from './tree.js';

// The whole screen: the tree and the detail panel side by side (or the help, or the run screen), a
// title, a status line and the keys. Its panels are drawn by their own modules.

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

/**
 * The whole screen as lines: a title, the tree and detail side by side, a status line and key
 * hints. Never more than `height` lines nor wider than `width - 1` columns, so Ink redraws in place
 * (at 80×24 too) and a terminal never wraps a line.
 */
export function renderScreen(state: BrowserState, size: ScreenSize): Line[] {
  const { width, height, bodyHeight, tree: leftWidth, detail: rightWidth } = screenLayout(size);
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
  let body: Line[];
  if (state.run) {
    const lines = state.editor ? editorPanel(state, width, bodyHeight) : runScreen(state, width, bodyHeight);
    body = lines.map((line) => clipLine(line, width));
  } else if (state.showHelp) {
    // Help takes the whole width: at 80 columns the detail panel is too narrow for it.
    body = helpLines.slice(0, bodyHeight).map((text) => clipLine(plain(text), width));
  } else {
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
