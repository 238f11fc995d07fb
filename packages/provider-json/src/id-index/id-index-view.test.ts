import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IdIndexView } from './id-index-view.js';

const first = '20261127T085300000-aaaaaaaa';
const second = '20261127T085300001-bbbbbbbb';
const entry = (id: string) => ({ id, branch: 'main', fileName: `${id}_p-none.json` });

let root: string;
let bucket: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'crewline-json-index-view-'));
  mkdirSync(join(root, '.ids'));
  bucket = join(root, '.ids', '_20261127T085300');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('IdIndexView', () => {
  it('reads what was appended since it last asked, a line still being written once it is whole', () => {
    const view = new IdIndexView();
    expect(view.entryOf(root, first)).toBeUndefined();
    writeFileSync(bucket, `${first} main/${first}_p-none.json\n${second} main/${second}`);
    expect(view.entryOf(root, first)).toEqual(entry(first));
    expect(view.entryOf(root, second)).toBeUndefined();
    appendFileSync(bucket, '_p-none.json\n');
    expect(view.entryOf(root, second)).toEqual(entry(second));
    appendFileSync(bucket, `${first} -\n`);
    expect(view.entryOf(root, first)).toBeUndefined();
  });

  it('reads a bucket replaced or cut shorter again from its start', () => {
    const view = new IdIndexView();
    writeFileSync(bucket, `${first} main/${first}_p-none.json\n${second} main/${second}_p-none.json\n`);
    expect(view.entryOf(root, second)).toEqual(entry(second));
    writeFileSync(bucket, `${first} main/${first}_p-none.json\n`);
    expect(view.entryOf(root, second)).toBeUndefined();
    expect(view.entryOf(root, first)).toEqual(entry(first));
  });

  it('answers for a group at once, across buckets', () => {
    const view = new IdIndexView();
    const later = '20261127T085301000-cccccccc';
    writeFileSync(bucket, `${first} main/${first}_p-none.json\n`);
    writeFileSync(join(root, '.ids', '_20261127T085301'), `${later} main/${later}_p-none.json\n`);
    expect(view.entriesOf(root, [second, later, first])).toEqual([undefined, entry(later), entry(first)]);
  });

  it('gives nothing for a damaged line, or a line naming another checkpoint', () => {
    const view = new IdIndexView();
    writeFileSync(bucket, `${first} ../main/${first}_p-none.json\n${second} main/${first}_p-none.json\n`);
    expect(view.entryOf(root, first)).toBeUndefined();
    expect(view.entryOf(root, second)).toBeUndefined();
  });
});
