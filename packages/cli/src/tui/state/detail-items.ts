import type { DocumentView } from '../../core/document-view.js';
import type { BrowserState } from './browser-state.js';

/** Keys shown in the Inputs tab: the kickoff inputs, then template placeholders that have no value. */
export function inputKeys(view: DocumentView): string[] {
  const keys = Object.keys(view.inputs);
  return [...keys, ...view.placeholders.filter((name) => !keys.includes(name))];
}

/** How many rows the cursor can move over in the current tab. */
export function detailItemCount(state: BrowserState): number {
  const view = state.detail?.status === 'ready' ? state.detail.view : undefined;
  if (!view) return 0;
  if (state.tab === 'tasks') return view.tasks.length;
  if (state.tab === 'inputs') return inputKeys(view).length;
  // Overview: the cursor is a scroll offset; the panel clamps it to its own length.
  return 1000;
}
