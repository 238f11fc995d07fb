import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JsonProvider } from '../json-provider.js';
import { indexedEntries, indexedIds } from '../test-support/id-index-entries.js';

// Counts directory listings: a read by id must open the checkpoint's file by name, never list the
// directories around it (a scan costs time in proportion to the checkpoints the location holds).
const listings = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>();
  const count =
    <F extends (...args: never[]) => unknown>(call: F) =>
    (...args: Parameters<F>) => {
      listings.count += 1;
      return call(...args);
    };
  return { ...original, readdir: count(original.readdir), opendir: count(original.opendir) };
});
vi.mock('node:fs', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs')>();
  const count =
    <F extends (...args: never[]) => unknown>(call: F) =>
    (...args: Parameters<F>) => {
      listings.count += 1;
      return call(...args);
    };
  return {
    ...original,
    readdirSync: count(original.readdirSync),
    opendirSync: count(original.opendirSync),
  };
});

const branches = ['main', 'fork/a', 'fork/a/b', 'other'];

describe('JsonProvider reads a checkpoint by its id alone', () => {
  let sandbox: string;
  let location: string;
  let written: StoredCheckpoint[];

  beforeEach(async () => {
    sandbox = mkdtempSync(join(tmpdir(), 'crewline-json-ids-'));
    location = join(sandbox, 'checkpoints');
    const writer = new JsonProvider({ fsync: false });
    written = [];
    for (let index = 0; index < 40; index += 1) {
      const write = buildCheckpointWrite({ metadata: { branch: branches[index % branches.length]! } });
      written.push(index % 2 === 0 ? writer.writeSync(location, write) : await writer.write(location, write));
    }
    // An async write resolves before its index entry is written; close() waits for the entries.
    await writer.close();
  });
  afterEach(() => rmSync(sandbox, { recursive: true, force: true }));

  it('reads any checkpoint without listing a directory, however many the location holds', async () => {
    // A fresh provider: nothing remembered from the writes.
    const provider = new JsonProvider();
    listings.count = 0;
    for (const stored of written) {
      const { text } = (await provider.read(location, stored.id)) as { text: string };
      expect(text).toBe(readFileSync(stored.reference, 'utf8'));
    }
    expect(listings.count).toBe(0);
  });

  it('keeps the id index beside the branches: lines "<id> <path relative to the location>" in buckets', async () => {
    const nested = written[2]!;
    expect(nested.branch).toBe('fork/a/b');
    expect(indexedEntries(location).get(nested.id)).toBe(`fork/a/b/${basename(nested.reference)}`);
    expect(indexedIds(location)).toEqual(written.map((entry) => entry.id).sort());
    // One bucket per second of ids (the first 15 characters of a generated id), not a file per entry.
    const buckets = readdirSync(join(location, '.ids'));
    expect(buckets).toEqual([...new Set(written.map((entry) => `_${entry.id.slice(0, 15)}`))].sort());
    expect(buckets.length).toBeLessThan(written.length);
  });

  it('reads a location whose index was written before buckets (one .ids/<id> file per entry)', async () => {
    rmSync(join(location, '.ids'), { recursive: true });
    mkdirSync(join(location, '.ids'));
    for (const entry of written)
      writeFileSync(join(location, '.ids', entry.id), `${entry.branch}/${basename(entry.reference)}`);
    const provider = new JsonProvider();
    listings.count = 0;
    for (const stored of written.slice(0, 5)) {
      const { text } = (await provider.read(location, stored.id)) as { text: string };
      expect(text).toBe(readFileSync(stored.reference, 'utf8'));
    }
    expect(listings.count).toBe(0);
    // Deleting one removes its old entry file too.
    expect(await provider.delete(location, written[1]!.id)).toBe(true);
    expect(existsSync(join(location, '.ids', written[1]!.id))).toBe(false);
  });

  it('lists exactly the checkpoints of the branches: the index is no branch', async () => {
    const provider = new JsonProvider();
    const listed = await provider.list(location);
    expect(listed.map((entry) => entry.id)).toEqual(written.map((entry) => entry.id).sort());
    expect(new Set(listed.map((entry) => entry.branch))).toEqual(new Set(branches));
    expect((await provider.latest(location))?.id).toBe(listed.at(-1)!.id);
  });

  it('reads a location written without the index by scanning once, then fills the entry', async () => {
    rmSync(join(location, '.ids'), { recursive: true });
    const provider = new JsonProvider();
    const target = written[7]!;
    listings.count = 0;
    await provider.read(location, target.id);
    expect(listings.count).toBeGreaterThan(0);
    expect(indexedEntries(location).get(target.id)).toBe(`${target.branch}/${basename(target.reference)}`);
    listings.count = 0;
    await new JsonProvider().read(location, target.id);
    expect(listings.count).toBe(0);
  });

  it('falls back to the scan for a damaged, stale or planted entry, and repairs it', async () => {
    const provider = new JsonProvider();
    const target = written[5]!;
    const bucket = join(location, '.ids', `_${target.id.slice(0, 15)}`);
    const expected = `${target.branch}/${basename(target.reference)}`;
    const other = written[6]!;
    // A checkpoint outside the location, and entries trying to lead there or to another checkpoint.
    const outside = await new JsonProvider().write(join(sandbox, 'outside'), buildCheckpointWrite());
    for (const planted of [
      '',
      'not a path',
      `main/${target.id}_p-none.json`,
      `${other.branch}/${basename(other.reference)}`,
      `../outside/main/${basename(outside.reference)}`,
      `/${outside.reference}`,
      'x'.repeat(100_000),
    ]) {
      // The planted line comes last, so it is the one that counts.
      writeFileSync(bucket, `${readFileSync(bucket, 'utf8')}${target.id} ${planted}\n`);
      const { text } = (await provider.read(location, target.id)) as { text: string };
      expect(text, planted.slice(0, 80)).toBe(readFileSync(target.reference, 'utf8'));
      expect(indexedEntries(location).get(target.id)).toBe(expected);
    }
    // A bucket that is a link is not followed (and never written through).
    rmSync(bucket);
    symlinkSync(outside.reference, bucket);
    await provider.read(location, target.id);
    await provider.write(location, buildCheckpointWrite({ metadata: { id: target.id } }));
    expect(readFileSync(outside.reference, 'utf8').startsWith('{"format"')).toBe(true);
  });

  it('a read of a removed checkpoint is not_found, and its stale entry goes', async () => {
    const provider = new JsonProvider();
    const target = written[3]!;
    rmSync(target.reference);
    await expect(provider.read(location, target.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(indexedEntries(location).has(target.id)).toBe(false);
  });

  it('delete finds the file by its id and removes the entry with it', async () => {
    const provider = new JsonProvider();
    const target = written[9]!;
    listings.count = 0;
    expect(await provider.delete(location, target.id)).toBe(true);
    expect(listings.count).toBe(0);
    expect(existsSync(target.reference)).toBe(false);
    expect(indexedEntries(location).has(target.id)).toBe(false);
    await expect(provider.read(location, target.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await provider.delete(location, target.id)).toBe(false);
  });

  it('prune removes the index entries of the checkpoints it removed, and only those', async () => {
    const provider = new JsonProvider({ fsync: false });
    const run: StoredCheckpoint[] = [];
    for (let index = 0; index < 4; index += 1) {
      const parentId: string | null = run.at(-1)?.id ?? null;
      run.push(
        await provider.write(
          location,
          buildCheckpointWrite({ metadata: { lineageId: 'pruned-run', parentId } }),
        ),
      );
    }
    await provider.close();
    const { removed } = await provider.prune(location, { keep: 1, lineageId: 'pruned-run' });
    expect(removed.map((entry) => entry.id)).toEqual(run.slice(0, 3).map((entry) => entry.id));
    const indexed = indexedEntries(location);
    for (const entry of run.slice(0, 3)) expect(indexed.has(entry.id)).toBe(false);
    expect(indexed.has(run[3]!.id)).toBe(true);
    expect(indexed.has(written[0]!.id)).toBe(true);
  });

  it('never writes through an index directory that is a link', async () => {
    const outside = join(sandbox, 'elsewhere');
    mkdirSync(outside);
    rmSync(join(location, '.ids'), { recursive: true });
    symlinkSync(outside, join(location, '.ids'), 'dir');
    const provider = new JsonProvider();
    const stored = await provider.write(location, buildCheckpointWrite());
    provider.writeSync(location, buildCheckpointWrite());
    await provider.close();
    expect(readdirSync(outside)).toEqual([]);
    const { text } = (await provider.read(location, stored.id)) as { text: string };
    expect(text).toBe(readFileSync(stored.reference, 'utf8'));
  });
});
