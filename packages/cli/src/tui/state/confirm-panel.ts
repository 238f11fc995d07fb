import type { BrowserState } from './browser-state.js';
import { packWords, wrapText } from './line-fitting.js';
import { type Line, plain } from './panels.js';
import { detailPanelSize, MINIMUM_SIZE } from './screen-layout.js';
import { editsFor } from './selection.js';

// The resume or fork confirmation: what will run, and what the plan says of it, before Enter or y.

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

/** The confirmation's key line items: Enter and y wait for the plan (see confirmKey) while it is worked out. */
function keyItems(state: BrowserState): string[] {
  const confirm = state.confirm!;
  return confirm.plan?.status === 'checking'
    ? ['esc/n cancel', 'enter/y once the plan shows']
    : [`enter/y ${confirm.mode}`, ...(confirm.mode === 'fork' ? ['b branch name'] : []), 'esc/n cancel'];
}

const keyLines = (items: string[], width: number): Line[] =>
  packWords(items, width, '   ').map((text): Line => [{ text, color: 'gray' }]);

/**
 * The confirmation laid out in `width` × `height`: its lines (blank ones gone when it does not fit),
 * its key lines, and how many rows of lines show at once when it scrolls (`scrolls` false: all do).
 */
function confirmLayout(
  state: BrowserState,
  width: number,
  height: number,
): { lines: Line[]; keys: Line[]; rows: number; scrolls: boolean } {
  const lines = confirmLines(state, width);
  const keys = keyLines(keyItems(state), width);
  if (lines.length + 1 + keys.length <= height)
    return { lines: [...lines, plain('')], keys, rows: lines.length + 1, scrolls: false };
  const compact = lines.filter((line) => line.some((segment) => segment.text !== ''));
  if (compact.length + keys.length <= height)
    return { lines: compact, keys, rows: compact.length, scrolls: false };
  const scrolled = keyLines(['j/k more', ...keyItems(state)], width);
  return { lines: compact, keys: scrolled, rows: Math.max(1, height - scrolled.length), scrolls: true };
}

/**
 * The most rows the confirmation scrolls (see confirmKey): its lines past those its panel shows, on
 * the screen as last drawn (`state.screen`), else in the minimum layout (the narrowest and shortest
 * panel, where it scrolls the most). It was its lines but one in the narrowest panel: after holding
 * j on a larger screen, k did nothing for as many presses as j had gone past the end (task h8 #5).
 */
export function confirmScrollLimit(state: BrowserState): number {
  const panel = detailPanelSize(state.screen ?? MINIMUM_SIZE);
  const layout = confirmLayout(state, panel.width, panel.height);
  return layout.scrolls ? Math.max(0, layout.lines.length - layout.rows) : 0;
}

/**
 * The confirmation in `height` rows, its key line always on the last ones: at 80×14 the plan's
 * warning filled the panel and the keys to press were cut. When it is too tall its blank lines go,
 * then the rest scrolls with j/k (`confirm.scroll`), the key line saying so.
 */
export function confirmPanel(state: BrowserState, width: number, height: number): Line[] {
  const layout = confirmLayout(state, width, height);
  if (!layout.scrolls) return [...layout.lines, ...layout.keys];
  const start = Math.max(0, Math.min(state.confirm!.scroll ?? 0, layout.lines.length - layout.rows));
  return [...layout.lines.slice(start, start + layout.rows), ...layout.keys];
}
