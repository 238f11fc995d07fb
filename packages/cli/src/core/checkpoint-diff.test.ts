import { describe, expect, it } from 'vitest';
import { type CheckpointDiff, diffCheckpoints, formatDiff } from './checkpoint-diff.js';
import type { DocumentView, TaskView } from './document-view.js';

function view(inputs: Record<string, unknown>, outputs: string[]): DocumentView {
  const tasks: TaskView[] = outputs.map((output, index) => ({
    index,
    description: `Task ${index + 1}`,
    status: 'completed',
    output,
  })) as TaskView[];
  return {
    document: {
      metadata: {
        id: `id-${JSON.stringify(inputs)}`,
        createdAt: '2026-11-21T10:00:00.000Z',
        branch: 'main',
        trigger: 'task_completed',
        eventCount: 1,
        parentId: null,
        lineageId: 'lineage',
      },
    },
    inputs,
    tasks,
    entities: [],
  } as unknown as DocumentView;
}

function taskDiff(fromOutput: string, toOutput: string): CheckpointDiff {
  return {
    from: 'a',
    to: 'b',
    fields: [],
    inputs: [],
    tasks: [
      {
        index: 0,
        description: 'Write',
        fromStatus: 'completed',
        toStatus: 'completed',
        fromOutput,
        toOutput,
        outputChanged: true,
      },
    ],
    state: [],
    completedMethods: null,
  };
}

describe('diffCheckpoints', () => {
  it('compares inputs structurally: the order of keys is no change', () => {
    const a = view({ book: { lang: 'en', year: 2020 }, tags: ['x', 'y'] }, []);
    const b = view({ book: { year: 2020, lang: 'en' }, tags: ['x', 'y'] }, []);
    expect(diffCheckpoints(a, b).inputs).toEqual([]);
    const c = view({ book: { year: 2021, lang: 'en' }, tags: ['y', 'x'] }, []);
    expect(diffCheckpoints(a, c).inputs.map((input) => input.key)).toEqual(['book', 'tags']);
  });
});

describe('formatDiff', () => {
  it('shows a changed output as a line diff: the changed lines and a little context, not one cut line', () => {
    const before = [
      '# Report',
      'Summary.',
      'Intro line.',
      'Findings: cheap.',
      'More 1',
      'More 2',
      'More 3',
      'Closing.',
    ].join('\n');
    const after = before.replace('Findings: cheap.', 'Findings: expensive.');
    const lines = formatDiff(taskDiff(before, after), 80);
    expect(lines).toContain('     - Findings: cheap.');
    expect(lines).toContain('     + Findings: expensive.');
    expect(lines).toContain('       Summary.');
    expect(lines).toContain('       Intro line.');
    expect(lines).toContain('       More 1');
    // Far from the change: left out.
    expect(lines.join('\n')).not.toContain('Closing.');
    expect(lines.join('\n')).not.toContain('# Report');
  });

  it('shows where two long lines differ instead of cutting both at the same column', () => {
    const common = 'word '.repeat(40);
    const lines = formatDiff(taskDiff(`${common}ends with apples.`, `${common}ends with pears.`), 60);
    const removed = lines.find((line) => line.startsWith('     - '))!;
    const added = lines.find((line) => line.startsWith('     + '))!;
    expect(removed).toContain('apples.');
    expect(added).toContain('pears.');
    expect(Array.from(removed).length).toBeLessThanOrEqual(60);
  });

  it('with full, shows every line of both outputs whole', () => {
    const before = ['one', 'two', 'three', 'four', 'five', 'six', 'seven'].join('\n');
    const after = `${before.replace('four', 'FOUR')}\n${'long '.repeat(40)}`;
    const text = formatDiff(taskDiff(before, after), 60, { full: true }).join('\n');
    expect(text).toContain('       one');
    expect(text).toContain('       seven');
    expect(text).toContain('     - four');
    expect(text).toContain('     + FOUR');
    expect(text).toContain(`     + ${'long '.repeat(40).trimEnd()}`);
  });
});
