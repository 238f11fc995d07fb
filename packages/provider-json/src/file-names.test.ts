import { describe, expect, it } from 'vitest';
import { checkpointFileName, fileNameProblem, parseCheckpointFileName } from './file-names.js';

describe('checkpoint file names', () => {
  it('carry the id and the parent', () => {
    expect(checkpointFileName('20260101T000000000-aa', null)).toBe('20260101T000000000-aa_p-none.json');
    expect(parseCheckpointFileName('20260101T000000000-bb_p-20260101T000000000-aa.json')).toEqual({
      id: '20260101T000000000-bb',
      parentId: '20260101T000000000-aa',
    });
    expect(parseCheckpointFileName('20260101T000000000-aa_p-none.json')).toEqual({
      id: '20260101T000000000-aa',
      parentId: null,
    });
  });

  it('sort in time order when ids do', () => {
    const ids = ['20260101T000000000-ff', '20260101T000000001-00', '20261231T235959999-00'];
    const names = ids.map((id, index) => checkpointFileName(id, index === 0 ? null : ids[index - 1]!));
    expect([...names].reverse().sort()).toEqual(names);
  });

  it('reject anything else', () => {
    for (const name of [
      'x.json',
      '_p-none.json',
      'a_p-.json',
      'a_p-none.txt',
      '.a_p-none.json',
      'a_p-..json',
      'a_p-../b.json',
    ]) {
      expect(parseCheckpointFileName(name), name).toBeUndefined();
    }
  });

  it('refuse ids that would make an ambiguous or too long name', () => {
    expect(fileNameProblem('a_p-b', null)).toMatch(/contains "_p-"/);
    expect(fileNameProblem('a'.repeat(128), 'b'.repeat(128))).toMatch(/longer than 255 bytes/);
    expect(fileNameProblem('20260101T000000000-aa', '20260101T000000000-bb')).toBeUndefined();
  });
});
