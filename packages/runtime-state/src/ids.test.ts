import { describe, expect, it } from 'vitest';
import { isValidCheckpointId, newCheckpointId } from './ids.js';

const idShape = /^\d{8}T\d{9}-[0-9a-f]{8}$/;

function millisOf(id: string): number {
  const stamp = id.slice(0, 18);
  return Date.UTC(
    Number(stamp.slice(0, 4)),
    Number(stamp.slice(4, 6)) - 1,
    Number(stamp.slice(6, 8)),
    Number(stamp.slice(9, 11)),
    Number(stamp.slice(11, 13)),
    Number(stamp.slice(13, 15)),
    Number(stamp.slice(15, 18)),
  );
}

function stampOf(millis: number): string {
  return new Date(millis).toISOString().replace(/[-:Z]/g, '').replace('.', '');
}

describe('newCheckpointId', () => {
  it('has the documented sortable shape', () => {
    const id = newCheckpointId(Date.UTC(2026, 10, 21, 9, 30, 0, 123));
    expect(id).toMatch(idShape);
    expect(id.startsWith('20261121T093000123-')).toBe(true);
    expect(isValidCheckpointId(id)).toBe(true);
  });

  it('gives many ids made in one millisecond that millisecond, in creation order', () => {
    // 10,000 checkpoints written within a few seconds used to get id times seconds in the future:
    // every id was forced one millisecond after the previous one.
    const now = Date.UTC(2030, 0, 1, 0, 0, 0, 0) + Math.floor(Math.random() * 1000);
    const ids = Array.from({ length: 10_000 }, () => newCheckpointId(now));
    for (const id of ids) {
      expect(id).toMatch(idShape);
      expect(millisOf(id)).toBe(now);
    }
    const sorted = [...ids].sort();
    expect(sorted).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('never goes backwards when the clock does, and does not run ahead of it', () => {
    const now = Date.UTC(2031, 0, 1, 0, 0, 0, 500);
    const first = newCheckpointId(now);
    const earlier = newCheckpointId(now - 200);
    const later = newCheckpointId(now + 3);
    expect(earlier > first).toBe(true);
    expect(millisOf(earlier)).toBe(now);
    expect(later > earlier).toBe(true);
    expect(millisOf(later)).toBe(now + 3);
  });

  it('sorts after ids made earlier in the same millisecond by older versions', () => {
    // Old ids are `<ms>-<8 random hex>`; new ones keep that form, so both sort by time first.
    const now = Date.UTC(2032, 0, 1, 0, 0, 0, 1);
    const oldForm = `${newCheckpointId(now).slice(0, 18)}-ffffffff`;
    expect(newCheckpointId(now + 1) > oldForm).toBe(true);
  });

  it('sorts after the parent it is given, made on a machine whose clock is ahead', () => {
    // A run continued on a machine 3 s behind the parent's writer made a child that sorted before its
    // parent: the parent stayed the lineage's head (the newest id) and was granted again.
    const now = Date.UTC(2034, 0, 1, 0, 0, 0, 0);
    newCheckpointId(now);
    const parent = `${stampOf(now + 3000)}-40000000`; // made by another process
    const child = newCheckpointId(now, parent);
    expect(child > parent).toBe(true);
    expect(millisOf(child)).toBe(now + 3000);
    // The ids after it keep growing; once the clock passes, they take the clock's time again.
    const next = newCheckpointId(now + 1, child);
    expect(next > child).toBe(true);
    expect(millisOf(newCheckpointId(now + 5000))).toBe(now + 5000);
    // A parent id of another form (written by hand, older versions) changes nothing.
    expect(millisOf(newCheckpointId(now + 6000, 'manual-id'))).toBe(now + 6000);
  });
});
