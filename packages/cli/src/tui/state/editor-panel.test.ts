import { describe, expect, it } from 'vitest';
import { type BrowserState, initialState } from './browser-state.js';
import { editorPanel } from './editor-panel.js';

/** The rows of text of the editor panel (its title, key line and blank line left out). */
function editorText(text: string, cursor: number, width: number): string[] {
  const state: BrowserState = {
    ...initialState({ location: 'memory-location', providerKind: 'memory' }),
    editor: { target: { kind: 'output', index: 0 }, buffer: { text, cursor } },
  };
  const lines = editorPanel(state, width, 20).map((line) => line.map((segment) => segment.text).join(''));
  return lines.slice(lines.indexOf('') + 1);
}

describe('editor panel', () => {
  // Task h8 #4 (review R3): a word ending at the row's edge left the next row holding only the space
  // after it, the next word on the row below.
  it('draws no row holding only the space after a word that ends at the edge', () => {
    expect(editorText('word1 word2 word3', 0, 5)).toEqual(['word1', 'word2', 'word3']);
    // The cursor on that space: it is drawn, at the start of the next row.
    expect(editorText('word1 word2', 5, 5)).toEqual(['word1', ' ', 'word2']);
    // The cursor after the end: drawn as a space after the text.
    expect(editorText('word1 word2', 11, 6)).toEqual(['word1 ', 'word2 ']);
  });
});
