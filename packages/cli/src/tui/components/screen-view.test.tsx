import { describe, expect, it } from 'vitest';
import type { Segment } from '../state/panels.js';
import { segmentStyle } from './screen-view.js';

describe('segmentStyle', () => {
  const segment: Segment = { text: 'x', color: 'green', bold: true, inverse: true };

  it('keeps colour, bold and reverse for a colour terminal', () => {
    expect(segmentStyle(segment, 'full')).toEqual({ color: 'green', bold: true, inverse: true });
  });

  it('drops colour under NO_COLOR but keeps the selection visible', () => {
    expect(segmentStyle(segment, 'monochrome')).toEqual({ color: undefined, bold: true, inverse: true });
  });

  it('drops every style when output is not a terminal', () => {
    expect(segmentStyle(segment, 'none')).toEqual({});
  });
});
