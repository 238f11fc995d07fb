import type { StoredCheckpoint } from '@crewline/runtime-state';
import { type BrowserState, done, type Edits, type Update } from './browser-state.js';
import { ancestorKeys, buildTree, findCheckpointNode, visibleRows } from './tree.js';

// What the browser has selected, and the selection kept when the checkpoint list (re)loads.

/** The selected checkpoint, when the selection is a checkpoint (not a group or branch). */
export function selectedCheckpoint(state: BrowserState): StoredCheckpoint | undefined {
  if (state.selectedKey === undefined) return undefined;
  return findCheckpointNode(state.tree, state.selectedKey)?.checkpoint;
}

/** The edits made to a checkpoint so far (empty when none). */
export function editsFor(state: BrowserState, checkpointId: string): Edits {
  return state.edits[checkpointId] ?? { outputs: {}, inputs: {} };
}

/** Selects `key` (none when `undefined`), asking for the detail of a checkpoint not loaded yet. */
export function select(state: BrowserState, key: string | undefined): Update {
  if (key === state.selectedKey) return done(state);
  const next: BrowserState = { ...state, selectedKey: key, detailCursor: 0, message: undefined };
  const node = key === undefined ? undefined : findCheckpointNode(state.tree, key);
  if (!node) return done({ ...next, detail: undefined });
  if (state.detail?.checkpointId === node.key && state.detail.status !== 'error') return done(next);
  return done({ ...next, detail: { checkpointId: node.key, status: 'loading' } }, [
    { type: 'load-detail', checkpointId: node.key, reference: node.checkpoint.reference },
  ]);
}

/** The newest of `checkpoints` (by time, then id: ids sort in creation order). */
export function newest(checkpoints: readonly StoredCheckpoint[]): StoredCheckpoint | undefined {
  let best: StoredCheckpoint | undefined;
  for (const checkpoint of checkpoints) {
    if (
      !best ||
      checkpoint.createdAt > best.createdAt ||
      (checkpoint.createdAt === best.createdAt && checkpoint.id > best.id)
    ) {
      best = checkpoint;
    }
  }
  return best;
}

/**
 * The checkpoint list arrived: the tree is rebuilt and the selection kept (or moved to the checkpoint
 * a run just wrote, or to the newest), with everything above it expanded.
 */
export function listLoaded(state: BrowserState, checkpoints: StoredCheckpoint[]): Update {
  const tree = buildTree(checkpoints);
  let next: BrowserState = { ...state, listStatus: 'ready', listError: undefined, checkpoints, tree };
  const rows = visibleRows(tree, next.collapsed);
  let target = state.selectedKey;
  // After a run the runtime names its last checkpoint by reference; listings know both.
  const wanted = checkpoints.find(
    (checkpoint) => checkpoint.id === state.selectAfterLoad || checkpoint.reference === state.selectAfterLoad,
  )?.id;
  if (wanted !== undefined) target = wanted;
  else if (target === undefined || !rows.some((row) => row.node.key === target)) {
    target = findCheckpointNode(tree, target ?? '') ? target : newest(checkpoints)?.id;
  }
  if (target !== undefined) {
    // Make the selection visible: expand everything above it.
    const collapsed = new Set(next.collapsed);
    for (const key of ancestorKeys(tree, target)) collapsed.delete(key);
    next = { ...next, collapsed };
  }
  // Checkpoints never change once written, so a detail already loaded for the target is kept.
  return select({ ...next, selectAfterLoad: undefined, selectedKey: undefined }, target);
}
