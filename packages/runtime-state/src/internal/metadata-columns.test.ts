import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { type DamagedRow, storedFromRawRow } from './metadata-columns.js';

const damagedRow: DamagedRow = (id, location, problem, cause) =>
  new CrewlineError('provider-test', 'corrupt_checkpoint', `${location}: ${id ?? '?'}: ${problem}`, {
    cause,
  });

// What a provider's list query returns for a sound row: the MetadataColumns order, then size_bytes.
const sound: unknown[] = [
  '20261121T000000000-aaaaaaaa',
  '2026-11-21T00:00:00.000Z',
  'lineage-1',
  null,
  'main',
  'task_completed',
  '[{"kind":"crew","id":"c","name":"research","completed":1,"total":2}]',
  3,
  '1200',
];

describe('storedFromRawRow', () => {
  it('builds a listed checkpoint from a sound row (size_bytes as a bigint column string too)', () => {
    expect(storedFromRawRow(sound, 'db', damagedRow)).toEqual({
      id: sound[0],
      createdAt: sound[1],
      lineageId: 'lineage-1',
      parentId: null,
      branch: 'main',
      trigger: 'task_completed',
      entities: [{ kind: 'crew', id: 'c', name: 'research', completed: 1, total: 2 }],
      eventCount: 3,
      reference: `db#${sound[0]}`,
      sizeBytes: 1200,
    });
  });

  it('refuses each column holding what no write stores, naming the column', () => {
    const cases: [number, unknown, string][] = [
      [0, '../escape', 'its id is text that is not a checkpoint id'],
      [0, null, 'its id is NULL'],
      [1, null, 'created_at is NULL'],
      [2, Buffer.from('x'), 'lineage_id is a blob'],
      [3, 42, 'parent_id is a number'],
      [4, Buffer.from('main'), 'branch is a blob'],
      [4, '../x', 'branch is text, not a branch name'],
      [5, null, 'trigger is NULL'],
      [6, null, 'entities is NULL'],
      [6, '{"kind', 'entities is not JSON'],
      [6, '[{"kind":"crew","id":"c","name":5}]', 'entities is not a list of entity summaries'],
      [6, '{}', 'entities is not a list of entity summaries'],
      [7, 'many', 'event_count is text, not a count'],
      [7, -1, 'event_count is a number, not a count'],
      [8, null, 'size_bytes is NULL'],
    ];
    for (const [column, value, problem] of cases) {
      const row = [...sound];
      row[column] = value;
      let refusal: unknown;
      try {
        storedFromRawRow(row, 'db', damagedRow);
      } catch (error) {
        refusal = error;
      }
      expect(CrewlineError.hasCode(refusal, 'corrupt_checkpoint'), `${column}: ${String(refusal)}`).toBe(
        true,
      );
      expect((refusal as Error).message, String(column)).toContain(problem);
    }
  });
});
