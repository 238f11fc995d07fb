import { describe, expect, it } from 'vitest';
import { formatEntities, formatEntity } from './summaries.js';

describe('formatEntity', () => {
  // The trial: `list` showed a crew without a name (the runtime calls it "crew") as "crew crew".
  it('names an unnamed crew once, as entityLabel does, and a named one with its name', () => {
    expect(formatEntity({ kind: 'crew', id: 'c1', name: 'crew', completed: 1, total: 2 })).toBe(
      'crew 1/2 tasks',
    );
    expect(formatEntity({ kind: 'crew', id: 'c2', name: 'Research', completed: 2, total: 2 })).toBe(
      'crew Research 2/2 tasks',
    );
    expect(
      formatEntities([
        { kind: 'flow', id: 'f', name: 'flow' },
        { kind: 'agent', id: 'a', name: 'Writer' },
      ]),
    ).toBe('flow, agent Writer');
  });
});
