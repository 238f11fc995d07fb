import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describeCheckpointProvider } from '@crewline/provider-testkit';
import { advanceTestRun, buildCheckpointWrite, createTestRun } from '@crewline/provider-testkit/fixtures';
import {
  createProviderRegistry,
  loadCheckpoint,
  providerEntryOf,
  readDocument,
} from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonProvider } from './json-provider.js';
import { corruptCheckpointFile } from './test-support/corrupt.js';
import { indexedIds } from './test-support/id-index-entries.js';
import { spawnScript, waitForSuccess } from './test-support/spawn.js';

describeCheckpointProvider({
  name: 'JsonProvider',
  createProvider: () => new JsonProvider(),
  createLocation: () => mkdtempSync(join(tmpdir(), 'crewline-json-')),
  removeLocation: (location) => rmSync(location, { recursive: true, force: true }),
  corrupt: corruptCheckpointFile,
  createLimitedProvider: (maxCheckpointBytes) => new JsonProvider({ maxCheckpointBytes }),
  concurrentWriters: {
    async spawn(location, count, perWriter) {
      await Promise.all(
        Array.from({ length: count }, (_, index) =>
          waitForSuccess(
            spawnScript('./writer-process.ts', [location, String(perWriter), String(index)]),
            `writer process ${index}`,
          ),
        ),
      );
    },
  },
});

describe('JsonProvider on disk', () => {
  let location: string;
  beforeEach(() => {
    location = mkdtempSync(join(tmpdir(), 'crewline-json-disk-'));
  });
  afterEach(() => rmSync(location, { recursive: true, force: true }));

  it('names files <id>_p-<parent|none>.json in the branch directory, in time order, with the exact text', async () => {
    const provider = new JsonProvider();
    const run = createTestRun({ provider, location });
    const writes: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      advanceTestRun(run);
      writes.push(run.state.writeCheckpointSync({ trigger: 'task_completed' }).id);
    }
    const names = readdirSync(join(location, 'main')).sort();
    expect(names).toEqual([
      `${writes[0]}_p-none.json`,
      `${writes[1]}_p-${writes[0]}.json`,
      `${writes[2]}_p-${writes[1]}.json`,
    ]);
    const stored = await provider.list(location);
    expect(stored.map((entry) => entry.reference)).toEqual(names.map((name) => join(location, 'main', name)));
    const text = readFileSync(join(location, 'main', names[1]!), 'utf8');
    expect(text.split('\n')[1]!.startsWith('"metadata": {')).toBe(true);
    expect(stored[1]!.sizeBytes).toBe(Buffer.byteLength(text));

    const write = buildCheckpointWrite();
    const result = provider.writeSync(location, write);
    expect(readFileSync(result.reference, 'utf8')).toBe(write.text());
    expect(result.reference).toBe(join(location, 'main', `${write.metadata.id}_p-none.json`));
  });

  it('stores a forked branch in nested directories beside its parent branch files', async () => {
    const provider = new JsonProvider();
    const run = createTestRun({ provider, location });
    const root = run.state.writeCheckpointSync();
    run.state.fork('fork/abc');
    const first = await run.state.writeCheckpoint();
    run.state.fork('fork/abc/deeper');
    const second = await run.state.writeCheckpoint();
    expect(readdirSync(join(location, 'fork', 'abc')).sort()).toEqual(
      [`${first.id}_p-${root.id}.json`, 'deeper'].sort(),
    );
    expect(readdirSync(join(location, 'fork', 'abc', 'deeper'))).toEqual([`${second.id}_p-${first.id}.json`]);
    expect((await provider.list(location, { branch: 'fork/abc' })).map((entry) => entry.id)).toEqual([
      first.id,
    ]);
    expect((await provider.list(location)).map((entry) => entry.branch)).toEqual([
      'main',
      'fork/abc',
      'fork/abc/deeper',
    ]);
  });

  it('creates files 0600 and directories 0700 by default', async () => {
    const provider = new JsonProvider();
    const stored = await provider.write(
      join(location, 'fresh'),
      buildCheckpointWrite({ metadata: { branch: 'a/b' } }),
    );
    if (process.platform === 'win32') return;
    expect(statSync(stored.reference).mode & 0o777).toBe(0o600);
    expect(statSync(join(location, 'fresh', 'a')).mode & 0o777).toBe(0o700);
    expect(statSync(join(location, 'fresh', 'a', 'b')).mode & 0o777).toBe(0o700);
  });

  it('lists a file from its metadata line without parsing the rest', async () => {
    const provider = new JsonProvider();
    const write = buildCheckpointWrite();
    const stored = await provider.write(location, write);
    const lines = write.text().split('\n');
    // The end closes the document as the layout does: a listing reads the first lines and the last bytes.
    writeFileSync(stored.reference, `${lines[0]}\n${lines[1]}\n this is { not JSON at all ]]]\n]\n}\n`);
    const listed = await provider.list(location);
    expect(listed.map((entry) => entry.id)).toEqual([write.metadata.id]);
    expect(listed[0]!.entities).toEqual(write.metadata.entities);
    expect((await provider.latest(location))?.id).toBe(write.metadata.id);
    await expect(readDocument(provider, location, write.metadata.id)).rejects.toMatchObject({
      code: 'corrupt_checkpoint',
    });
  });

  it('falls back to a full parse for a file laid out by hand (pretty-printed)', async () => {
    const provider = new JsonProvider();
    const write = buildCheckpointWrite({ metadata: { branch: 'edited' } });
    mkdirSync(join(location, 'edited'));
    writeFileSync(
      join(location, 'edited', `${write.metadata.id}_p-none.json`),
      JSON.stringify(write.document, null, 2),
    );
    const listed = await provider.list(location);
    expect(listed.map((entry) => entry.id)).toEqual([write.metadata.id]);
    expect((await readDocument(provider, location, write.metadata.id)).inputs).toEqual(write.document.inputs);
  });

  it('skips unreadable or misplaced files, logging each once, and lists the rest', async () => {
    const provider = new JsonProvider();
    const good = await provider.write(location, buildCheckpointWrite());
    const moved = buildCheckpointWrite({ metadata: { branch: 'elsewhere' } });
    mkdirSync(join(location, 'main', 'sub'));
    // A file whose contents say another branch than its directory: moved by hand.
    writeFileSync(join(location, 'main', 'sub', `${moved.metadata.id}_p-none.json`), moved.text());
    writeFileSync(
      join(location, 'main', '20200101T000000000-deadbeef_p-none.json'),
      '{"format": "crewline.checkpoint", "formatVer',
    );
    writeFileSync(join(location, 'main', 'notes.txt'), 'not a checkpoint');
    writeFileSync(join(location, 'stray_p-none.json'), good.reference);
    const logged = captureStderr();
    try {
      expect((await provider.list(location)).map((entry) => entry.id)).toEqual([good.id]);
      expect((await provider.list(location)).map((entry) => entry.id)).toEqual([good.id]);
    } finally {
      logged.restore();
    }
    const warnings = logged
      .text()
      .split('\n')
      .filter((line) => line.includes('skipping unreadable checkpoint file'));
    expect(warnings.length).toBe(2);
    expect(warnings.some((line) => line.includes('moved or renamed by hand'))).toBe(true);
  });

  it('refuses a location that is a file with a typed error naming the fix', async () => {
    const file = join(location, 'checkpoints.db');
    writeFileSync(file, 'x');
    const provider = new JsonProvider();
    const expected = `[provider-json] location "${file}" is a file, not a directory; pass a directory or use SqliteProvider`;
    expect(() => provider.writeSync(file, buildCheckpointWrite())).toThrow(
      expect.objectContaining({ code: 'invalid_config', message: expected }),
    );
    await expect(provider.write(file, buildCheckpointWrite())).rejects.toMatchObject({
      code: 'invalid_config',
      message: expected,
    });
    await expect(provider.list(file)).rejects.toMatchObject({ code: 'invalid_config' });
    await expect(provider.read(file, '20200101T000000000-00000000')).rejects.toMatchObject({
      code: 'invalid_config',
    });
  });

  it('a missing location lists nothing and is created by the first write', async () => {
    const provider = new JsonProvider();
    const missing = join(location, 'not', 'yet');
    expect(await provider.list(missing)).toEqual([]);
    expect(await provider.latest(missing)).toBeUndefined();
    expect(await provider.delete(missing, '20200101T000000000-00000000')).toBe(false);
    expect((await provider.prune(missing, { keep: 1 })).removed).toEqual([]);
    await expect(provider.read(missing, '20200101T000000000-00000000')).rejects.toMatchObject({
      code: 'not_found',
    });
    expect(existsSync(missing)).toBe(false);
    provider.writeSync(missing, buildCheckpointWrite());
    expect((await provider.list(missing)).length).toBe(1);
  });

  it('delete removes branch directories it empties, never the location', async () => {
    const provider = new JsonProvider();
    const nested = await provider.write(location, buildCheckpointWrite({ metadata: { branch: 'fork/a/b' } }));
    const other = await provider.write(location, buildCheckpointWrite({ metadata: { branch: 'fork/c' } }));
    await provider.delete(location, nested.id);
    expect(existsSync(join(location, 'fork', 'a'))).toBe(false);
    expect(readdirSync(join(location, 'fork'))).toEqual(['c']);
    await provider.delete(location, other.id);
    // What remains is the id index directory, with no entry left (see id-index.ts).
    expect(readdirSync(location)).toEqual(['.ids']);
    expect(indexedIds(location)).toEqual([]);
    expect(existsSync(location)).toBe(true);
  });

  it('refuses a checkpoint over maxCheckpointBytes on write, leaving no file behind', async () => {
    const provider = new JsonProvider({ maxCheckpointBytes: 1024 });
    const write = buildCheckpointWrite();
    expect(Buffer.byteLength(write.text())).toBeGreaterThan(1024);
    expect(() => provider.writeSync(location, write)).toThrow(
      /over maxCheckpointBytes \(1024\); raise maxCheckpointBytes/,
    );
    await expect(provider.write(location, write)).rejects.toMatchObject({ code: 'too_large' });
    expect(readdirSync(location)).toEqual([]);
  });

  it('writes with fsync: false are still complete files', async () => {
    const provider = new JsonProvider({ fsync: false });
    const write = buildCheckpointWrite();
    const stored = await provider.write(location, write);
    expect(readFileSync(stored.reference, 'utf8')).toBe(write.text());
  });

  describe('references', () => {
    it('resolves a file path, the location, a branch directory and dir#id', async () => {
      const provider = new JsonProvider();
      const run = createTestRun({ provider, location });
      const first = run.state.writeCheckpointSync();
      run.state.fork('fork/x');
      const forked = run.state.writeCheckpointSync();
      run.state.fork('main-2');
      const newest = run.state.writeCheckpointSync();

      expect(provider.parseReference(forked.reference)).toMatchObject({
        location,
        id: forked.id,
        checkpoint: { id: forked.id, reference: forked.reference },
      });
      expect(provider.parseReference(location)).toEqual({ location });
      expect(provider.parseReference(join(location, 'fork', 'x'))).toEqual({ location, id: forked.id });
      expect(provider.parseReference(`${location}#${first.id}`)).toEqual({ location, id: first.id });
      expect(provider.parseReference(join(location, 'missing.json'))).toBeUndefined();
      expect(provider.parseReference('postgres://user@host/db#x')).toBeUndefined();

      const catalog = createProviderRegistry([providerEntryOf(provider)]);
      expect((await loadCheckpoint(forked.reference, catalog)).document.metadata.id).toBe(forked.id);
      expect((await loadCheckpoint(location, catalog)).checkpoint.id).toBe(newest.id);
      expect((await loadCheckpoint(`${location}#${first.id}`, catalog)).checkpoint.id).toBe(first.id);
      expect((await loadCheckpoint(join(location, 'fork', 'x'), catalog)).checkpoint.id).toBe(forked.id);
    });

    it('reads a file moved into another branch directory on its own, never as part of the location', async () => {
      const provider = new JsonProvider();
      const stored = provider.writeSync(location, buildCheckpointWrite({ metadata: { branch: 'a' } }));
      mkdirSync(join(location, 'b'));
      const moved = join(location, 'b', basename(stored.reference));
      renameSync(stored.reference, moved);
      expect(provider.parseReference(moved)).toMatchObject({ location: moved, id: stored.id });
      expect(
        (await loadCheckpoint(moved, createProviderRegistry([providerEntryOf(provider)]))).document.metadata
          .id,
      ).toBe(stored.id);
    });

    it('a file over maxCheckpointBytes is too_large, with the limit and the option that raises it', async () => {
      const stored = await new JsonProvider().write(location, buildCheckpointWrite());
      const limited = new JsonProvider({ maxCheckpointBytes: 1024 });
      await expect(limited.read(location, stored.id)).rejects.toMatchObject({
        code: 'too_large',
        message: expect.stringMatching(
          new RegExp(
            `is ${stored.sizeBytes} bytes, over the 1024-byte limit \\(maxCheckpointBytes\\); .*new JsonProvider\\(\\{ maxCheckpointBytes: ${stored.sizeBytes} \\}\\)`,
          ),
        ),
      });
    });
  });
});

function captureStderr() {
  const chunks: string[] = [];
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stderr.write;
  return {
    text: () => chunks.join(''),
    restore: () => {
      process.stderr.write = original;
    },
  };
}
