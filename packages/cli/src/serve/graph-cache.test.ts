import type { StoredCheckpoint } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { GraphCache, listingFingerprint } from './graph-cache.js';
import { layoutLineage } from './lineage-graph.js';

function checkpoint(id: string, parentId: string | null, completed: number): StoredCheckpoint {
  return {
    id,
    reference: `memory#${id}`,
    createdAt: `2026-01-01T00:00:0${id}.000Z`,
    lineageId: 'run-main',
    parentId,
    branch: 'main',
    trigger: 'task_completed',
    entities: [{ kind: 'crew', id: 'crew-1', name: 'Research', status: 'running', completed, total: 3 }],
    eventCount: 1,
  };
}

function countingCache(entries?: number) {
  const calls: number[] = [];
  const cache = new GraphCache({
    ...(entries !== undefined ? { entries } : {}),
    layout: (checkpoints, options) => {
      calls.push(checkpoints.length);
      return layoutLineage(checkpoints, options);
    },
  });
  return { cache, calls };
}

describe('GraphCache', () => {
  it('lays a listing out once, also when a later request listed the same checkpoints again', () => {
    const { cache, calls } = countingCache();
    const expand = new Set<string>();
    const first = cache.body([checkpoint('1', null, 0), checkpoint('2', '1', 1)], { expand });
    const again = cache.body([checkpoint('1', null, 0), checkpoint('2', '1', 1)], { expand });
    expect(again).toBe(first);
    expect(calls).toEqual([2]);
    expect(JSON.parse(first).count).toBe(2);
  });

  it('lays out again when a checkpoint was written or its progress differs, or other nodes are expanded', () => {
    const { cache, calls } = countingCache();
    const listing = [checkpoint('1', null, 0), checkpoint('2', '1', 1)];
    cache.body(listing, { expand: new Set() });
    const written = JSON.parse(cache.body([...listing, checkpoint('3', '2', 2)], { expand: new Set() }));
    expect(written.count).toBe(3);
    cache.body([checkpoint('1', null, 0), checkpoint('2', '1', 2)], { expand: new Set() });
    cache.body(listing, { expand: new Set(['1']) });
    expect(calls).toEqual([2, 3, 2, 2]);
    expect(listingFingerprint(listing)).not.toBe(
      listingFingerprint([checkpoint('1', null, 0), checkpoint('2', '1', 2)]),
    );
  });

  it('keeps the most recently used graphs up to its size', () => {
    const { cache, calls } = countingCache(2);
    const listings = [[checkpoint('1', null, 0)], [checkpoint('2', null, 0)], [checkpoint('3', null, 0)]];
    const expand = new Set<string>();
    cache.body(listings[0]!, { expand });
    cache.body(listings[1]!, { expand });
    cache.body(listings[0]!, { expand });
    cache.body(listings[2]!, { expand });
    // The second was the least recently used: dropped; the first is still there.
    cache.body(listings[0]!, { expand });
    cache.body(listings[1]!, { expand });
    expect(calls).toEqual([1, 1, 1, 1]);
  });
});
