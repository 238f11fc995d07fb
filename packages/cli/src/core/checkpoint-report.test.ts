import type { LoadedCheckpoint } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { checkpointReport, entityHeading } from './checkpoint-report.js';
import type { DocumentView, EntityView } from './document-view.js';

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

describe('checkpointReport --full', () => {
  const long = `${'word '.repeat(60)}end`;
  const loaded = {
    checkpoint: { reference: 'memory:x', sizeBytes: 10 },
  } as unknown as LoadedCheckpoint;
  const view = (entities: EntityView[]): DocumentView =>
    ({
      document: {
        metadata: {
          id: 'c1',
          createdAt: '2026-11-27T00:00:00.000Z',
          trigger: 'manual',
          branch: 'main',
          parentId: null,
          lineageId: 'l1',
          eventCount: 1,
        },
        format: 'crewline-checkpoint',
        formatVersion: 1,
        libraryVersion: '0.0.0',
      },
      inputs: { topic: long },
      entities,
      tasks: [],
      placeholders: [],
      missingPlaceholders: [],
    }) as unknown as DocumentView;
  const flowState = Object.fromEntries(Array.from({ length: 12 }, (_, index) => [`key${index}`, long]));
  const flow = entity({ kind: 'flow', name: 'ReportFlow', id: 'report', state: flowState });
  const agent = entity({
    kind: 'agent',
    name: 'Writer',
    agents: [{ role: 'Writer' }],
    messageCount: 2,
    answer: `${long}\nsecond line`,
  });

  // Trial 3: --full still cut the inputs and the flow state (10 keys, each to the width) and never
  // showed what a standalone agent answered.
  it('shows the inputs, every key of the flow state and an agent answer whole', () => {
    const text = checkpointReport(loaded, view([flow, agent]), { cwd: '/', full: true }).join('\n');
    expect(text).toContain(`topic = ${JSON.stringify(long)}`);
    for (const key of Object.keys(flowState)) expect(text).toContain(`${key} = ${JSON.stringify(long)}`);
    expect(text).not.toContain('more');
    expect(text).toContain(`| ${long}\n`);
    expect(text).toContain('| second line');
  });

  it('keeps one-line previews without --full, the agent answer among them', () => {
    const lines = checkpointReport(loaded, view([flow, agent]), { cwd: '/' });
    expect(lines.every((line) => line.length <= 100)).toBe(true);
    expect(lines).toContain('    ... 2 more');
    expect(lines.some((line) => line.startsWith('  Answer: word word') && line.endsWith('...'))).toBe(true);
  });
});
