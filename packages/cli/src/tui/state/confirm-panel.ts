import type { BrowserState } from './browser-state.js';
import { packWords, wrapText } from './line-fitting.js';
import { type Line, plain } from './panels.js';
import { MINIMUM_SIZE, panelWidths } from './screen-layout.js';
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

/**
 * The most rows the confirmation scrolls (see confirmKey): its lines but one in the narrowest detail
 * panel, the minimum layout's, where it wraps to the most lines. The state has no screen size, so on
 * a wider screen it can scroll past the end: the panel stops at its last rows (as the Overview tab).
 */
export function confirmScrollLimit(state: BrowserState): number {
  return confirmLines(state, panelWidths(MINIMUM_SIZE.width - 1).detail).length - 1;
}

/**
 * The confirmation in `height` rows, its key line always on the last ones: at 80×14 the plan's
 * warning filled the panel and the keys to press were cut. When it is too tall its blank lines go,
 * then the rest scrolls with j/k (`confirm.scroll`), the key line saying so.
 */
export function confirmPanel(state: BrowserState, width: number, height: number): Line[] {
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
