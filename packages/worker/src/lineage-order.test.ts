import type { StoredCheckpoint } from '@crewline/runtime-state';
import { expect, it } from 'vitest';
import { lineageOrder } from './lineage-order.js';

function checkpoint(id: string, eventCount: number, createdAt: string): StoredCheckpoint {
  return { id, eventCount, createdAt } as StoredCheckpoint;
}

it('orders a lineage by the events its checkpoints hold, then by time', () => {
  const sameMillisecond = '2026-01-01T00:00:00.000Z';
  const listed = [
    checkpoint('c', 7, sameMillisecond),
    checkpoint('a', 3, sameMillisecond),
    checkpoint('b', 5, sameMillisecond),
    checkpoint('d', 7, '2026-01-01T00:00:00.001Z'),
  ];
  expect(lineageOrder(listed).map((each) => each.id)).toEqual(['a', 'b', 'c', 'd']);
  // The listing itself is left as it was.
  expect(listed[0]!.id).toBe('c');
});
