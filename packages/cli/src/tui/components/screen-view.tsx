/** @jsxRuntime automatic */
/** @jsxImportSource react */
// The pragmas keep the automatic JSX runtime when tsx runs this file outside our tsconfig (a user project).
import { Box, Text } from 'ink';
import type { Line, Segment } from '../state/panels.js';

/** How much styling the terminal gets: `full`, `monochrome` (NO_COLOR: bold and reverse only) or `none`. */
export type Styling = 'full' | 'monochrome' | 'none';

/** The Ink text props of a segment under a styling: colour only for `full`, nothing at all for `none`. */
export function segmentStyle(
  segment: Segment,
  styling: Styling,
): { color?: string; bold?: boolean; inverse?: boolean } {
  if (styling === 'none') return {};
  return {
    color: styling === 'full' ? segment.color : undefined,
    bold: segment.bold === true ? true : undefined,
    inverse: segment.inverse === true ? true : undefined,
  };
}

/** Draws the lines computed by `renderScreen`, one Ink `Text` per line. */
export function ScreenView({ lines, styling }: { lines: readonly Line[]; styling: Styling }) {
  return (
    <Box flexDirection="column">
      {lines.map((line, row) => (
        // Rows are positions on the screen, so the index is the right key.
        // biome-ignore lint/suspicious/noArrayIndexKey: screen rows have no other identity
        <Text key={row} wrap="truncate-end">
          {line.length === 0
            ? ' '
            : line.map((segment, column) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: segments of a row have no other identity
                <Text key={column} {...segmentStyle(segment, styling)}>
                  {segment.text}
                </Text>
              ))}
        </Text>
      ))}
    </Box>
  );
}
