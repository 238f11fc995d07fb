import { inputNames } from '../../core/document-view.js';
import type { BrowserState } from './browser-state.js';
import { overviewLines } from './panels.js';

/** How many rows the cursor can move over in the current tab (the Overview scrolls by line). */
export function detailItemCount(state: BrowserState): number {
  const view = state.detail?.status === 'ready' ? state.detail.view : undefined;
  if (!view) return 0;
  if (state.tab === 'tasks') return view.tasks.length;
  if (state.tab === 'inputs') return inputNames(view).length;
  const checkpoint = state.checkpoints.find((candidate) => candidate.id === state.detail?.checkpointId);
  if (!checkpoint) return 0;
  return overviewLines(view, checkpoint, state.edits[checkpoint.id] ?? { outputs: {}, inputs: {} }).length;
}
