/** The size renderScreen lays the browser out for. */
export interface ScreenSize {
  width: number;
  height: number;
  /** "Now" for relative times. Default `Date.now()`. */
  now?: number;
}

/** Smallest screen the browser lays out for; smaller terminals get a clipped 80×24 layout. */
export const MINIMUM_SIZE = { width: 60, height: 12 } as const;

/**
 * The columns of the tree and the detail panel side by side in `width` columns (the screen's, less
 * the one column left free so a terminal never wraps), with the ` | ` between them.
 */
export function panelWidths(width: number): { tree: number; detail: number } {
  const tree = Math.min(44, Math.max(28, Math.floor(width * 0.42)));
  return { tree, detail: width - tree - 3 };
}

/**
 * How renderScreen lays out a screen of `size`: the columns it draws (the screen's less the one left
 * free, never fewer than the minimum layout's), its lines, the rows between the title and the status
 * and key lines, and the tree's and detail panel's columns.
 */
export function screenLayout(size: { width: number; height: number }): {
  width: number;
  height: number;
  bodyHeight: number;
  tree: number;
  detail: number;
} {
  const width = Math.max(MINIMUM_SIZE.width, size.width) - 1;
  const height = Math.max(MINIMUM_SIZE.height, size.height) - 1;
  return { width, height, bodyHeight: height - 3, ...panelWidths(width) };
}

/** The detail panel's columns and rows on a screen of `size` (what renderScreen gives it). */
export function detailPanelSize(size: { width: number; height: number }): { width: number; height: number } {
  const layout = screenLayout(size);
  return { width: layout.detail, height: layout.bodyHeight };
}
