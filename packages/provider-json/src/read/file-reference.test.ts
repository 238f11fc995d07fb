import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { advanceTestRun, createTestRun } from '@crewline/provider-testkit/fixtures';
import {
  createProviderRegistry,
  loadCheckpoint,
  providerEntryOf,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JsonProvider } from '../json-provider.js';

// Counts directory listings, to prove that a file reference is resolved and read without walking
// the location (one file, whatever the number of checkpoints around it).
const listings = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...original,
    readdir: ((...args: Parameters<typeof original.readdir>) => {
      listings.count += 1;
      return original.readdir(...args);
    }) as typeof original.readdir,
  };
});

describe('JsonProvider file references', () => {
  let directory: string;
  let location: string;
  let provider: JsonProvider;
  let written: StoredCheckpoint[];

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'crewline-json-reference-'));
    location = join(directory, '.checkpoints');
    provider = new JsonProvider();
    const run = createTestRun({ provider, location });
    written = [];
    for (let index = 0; index < 30; index += 1) {
      advanceTestRun(run);
      written.push(run.state.writeCheckpointSync({ trigger: 'task_completed' }));
    }
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const catalog = () => createProviderRegistry([providerEntryOf(provider)]);

  it('resolves and reads a checkpoint file without listing or walking the location', async () => {
    const target = written[12]!;
    const list = vi.spyOn(provider, 'list');
    const latest = vi.spyOn(provider, 'latest');
    listings.count = 0;
    const loaded = await loadCheckpoint(target.reference, catalog());
    expect(loaded.document.metadata.id).toBe(target.id);
    expect(loaded.location).toBe(location);
    expect(loaded.checkpoint.reference).toBe(target.reference);
    expect(list).not.toHaveBeenCalled();
    expect(latest).not.toHaveBeenCalled();
    expect(listings.count).toBe(0);
  });

  it('resolves and reads a file of a location written without the id index, still without listing it', async () => {
    rmSync(join(location, '.ids'), { recursive: true, force: true });
    const target = written[20]!;
    listings.count = 0;
    const loaded = await loadCheckpoint(target.reference, catalog());
    expect(loaded.document.metadata.id).toBe(target.id);
    expect(listings.count).toBe(0);
  });

  it('reads a renamed copy by its path, in the location or anywhere else, as a standalone checkpoint', async () => {
    const target = written[3]!;
    const elsewhere = join(directory, 'saved');
    mkdirSync(elsewhere);
    const copies = [
      join(elsewhere, 'saved.json'),
      join(location, 'main', 'saved.json'),
      // A checkpoint file name, copied out of its branch directory.
      join(elsewhere, basename(target.reference)),
    ];
    for (const copy of copies) {
      copyFileSync(target.reference, copy);
      const loaded = await loadCheckpoint(copy, catalog());
      expect(loaded.document.metadata.id, copy).toBe(target.id);
      expect(loaded.location, copy).toBe(copy);
      expect((await provider.list(copy)).map((entry) => entry.id)).toEqual([target.id]);
      expect((await provider.latest(copy))?.reference).toBe(copy);
      await expect(provider.read(copy, written[4]!.id)).rejects.toMatchObject({ code: 'not_found' });
      // A standalone file is a location to read from, never to write or prune in.
      await expect(provider.prune(copy, { keep: 1 })).rejects.toMatchObject({ code: 'invalid_config' });
    }
    // The copy inside the branch directory is not part of the location's listing.
    expect((await provider.list(location)).map((entry) => entry.id)).toEqual(
      written.map((entry) => entry.id),
    );
  });

  it('refuses a file whose name and contents disagree, naming both ids', async () => {
    const [older, , , newer] = [written[0]!, written[1]!, written[2]!, written[3]!];
    const olderText = readFileSync(older.reference, 'utf8');
    for (const replacement of [olderText, olderText.slice(0, Math.floor(olderText.length / 2))]) {
      // Renamed over another (or overwritten and torn): the name says `newer`, the header `older`.
      writeFileSync(newer.reference, replacement);
      const message = new RegExp(`named for checkpoint "${newer.id}" but holds checkpoint "${older.id}"`);
      expect(() => provider.parseReference(newer.reference)).toThrow(message);
      await expect(loadCheckpoint(newer.reference, catalog())).rejects.toMatchObject({
        code: 'corrupt_checkpoint',
        message: expect.stringMatching(message),
      });
      await expect(provider.read(location, newer.id)).rejects.toMatchObject({
        code: 'corrupt_checkpoint',
        message: expect.stringMatching(message),
      });
    }
  });

  it('a file that is no JSON object at all is not a JSON reference', () => {
    const notes = join(directory, 'notes.txt');
    writeFileSync(notes, 'just some notes');
    expect(provider.parseReference(notes)).toBeUndefined();
  });
});
