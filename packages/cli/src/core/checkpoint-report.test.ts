import { describe, expect, it } from 'vitest';
import { entityHeading } from './checkpoint-report.js';
import type { EntityView } from './document-view.js';

function entity(overrides: Partial<EntityView>): EntityView {
  return { kind: 'crew', id: 'x', name: 'crew', tasks: [], agents: [], completedMethods: [], ...overrides };
}

describe('entityHeading', () => {
  // The trial: `info` of a flow showed "(tides-re)": its state id, a name the user chose, cut to 8.
  it('prints the whole state id of a flow', () => {
    expect(
      entityHeading(entity({ kind: 'flow', name: 'ReportFlow', id: 'tides-report', status: 'completed' })),
    ).toBe('flow ReportFlow (tides-report) completed');
  });

  it('keeps a crew id short (a generated uuid) and names an unnamed crew once', () => {
    expect(entityHeading(entity({ id: '80151758-70d3-4e6c-8e5e-24a2f964aec5' }))).toBe('crew (80151758)');
  });
});
