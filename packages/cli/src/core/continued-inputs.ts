import type { DocumentView } from './document-view.js';

/**
 * The inputs a resume or fork of `view`'s checkpoint is given for the input `changes` asked for
 * (`--input`, the terminal UI's and the explorer's edits), or `undefined` for none. A crew gets every
 * saved kickoff input with the changes laid over: it fills the templates of its pending tasks with
 * them, and its saved inputs are what it was kicked off with. A flow gets the changes alone: its
 * inputs are merged into its restored state, and the saved kickoff inputs sent again would undo what
 * its completed methods made of those fields (a count they raised put back to its starting value).
 */
export function continuedInputs(
  view: DocumentView,
  changes: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> | undefined {
  if (changes === undefined || Object.keys(changes).length === 0) return undefined;
  if (view.document.entities[0]?.kind === 'flow') return { ...changes };
  return { ...view.inputs, ...changes };
}
