import { type BrowserState, done, type Update } from './browser-state.js';
import { type KeyPress, PAGE_ROWS } from './key-press.js';
import { select } from './selection.js';
import { ancestorKeys, visibleRows } from './tree.js';

// Keys while the checkpoint tree has the focus: moving, expanding and collapsing.

function moveSelection(state: BrowserState, delta: number | 'first' | 'last'): Update {
  const rows = visibleRows(state.tree, state.collapsed);
  if (rows.length === 0) return done(state);
  const current = rows.findIndex((row) => row.node.key === state.selectedKey);
  let index: number;
  if (delta === 'first') index = 0;
  else if (delta === 'last') index = rows.length - 1;
  else index = Math.min(rows.length - 1, Math.max(0, Math.max(current, 0) + delta));
  return select(state, rows[index]!.node.key);
}

function setCollapsed(state: BrowserState, key: string, collapse: boolean): BrowserState {
  const collapsed = new Set(state.collapsed);
  if (collapse) collapsed.add(key);
  else collapsed.delete(key);
  return { ...state, collapsed };
}

/** A key pressed while the tree has the focus. */
export function treeKey(state: BrowserState, press: KeyPress): Update {
  const rows = visibleRows(state.tree, state.collapsed);
  const row = rows.find((candidate) => candidate.node.key === state.selectedKey);
  const name = press.name;
  if (name === 'up' || press.input === 'k') return moveSelection(state, -1);
  if (name === 'down' || press.input === 'j') return moveSelection(state, 1);
  if (name === 'pageup') return moveSelection(state, -PAGE_ROWS);
  if (name === 'pagedown') return moveSelection(state, PAGE_ROWS);
  if (name === 'home' || press.input === 'g') return moveSelection(state, 'first');
  if (name === 'end' || press.input === 'G') return moveSelection(state, 'last');
  if (!row) return done(state);
  if (name === 'left' || press.input === 'h') {
    if (row.expandable && row.expanded) return done(setCollapsed(state, row.node.key, true));
    const parentKey = ancestorKeys(state.tree, row.node.key).at(-1);
    return parentKey === undefined ? done(state) : select(state, parentKey);
  }
  if (name === 'right' || press.input === 'l') {
    if (row.expandable && !row.expanded) return done(setCollapsed(state, row.node.key, false));
    if (row.node.type === 'checkpoint') return done({ ...state, focus: 'detail' });
    return moveSelection(state, 1);
  }
  if (name === 'return' || press.input === ' ') {
    if (row.node.type === 'checkpoint' && name === 'return') return done({ ...state, focus: 'detail' });
    if (row.expandable) return done(setCollapsed(state, row.node.key, row.expanded));
  }
  return done(state);
}
