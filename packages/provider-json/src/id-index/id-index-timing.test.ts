import { constants, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LogRecord, setLogSink } from '@crewline/events';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JsonProvider } from '../json-provider.js';
import { indexedIds } from '../test-support/id-index-entries.js';

// Index entries are written on a background lane after an async write resolved. Slowed down here
// (a busy thread pool) so that a delete, prune or removal lands before they are written; or held
// until the test lets them go (`gate`), where a delay would race the test on a loaded machine.
const slowEntries = vi.hoisted(() => ({ delayMs: 0, gate: undefined as Promise<void> | undefined }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>();
  const open: typeof original.open = async (path, flags, mode) => {
    const creates = typeof flags === 'number' && (flags & constants.O_CREAT) !== 0;
    if (creates && String(path).includes('/.ids/')) {
      if (slowEntries.gate !== undefined) await slowEntries.gate;
      else if (slowEntries.delayMs > 0)
        await new Promise((resolve) => setTimeout(resolve, slowEntries.delayMs));
    }
    return original.open(path, flags, mode);
  };
  return { ...original, open };
});

describe('id index entries written after an async write resolved', () => {
  let sandbox: string;
  let location: string;
  let warnings: LogRecord[];
  let previousSink: ReturnType<typeof setLogSink>;

  beforeEach(() => {
    sandbox = mkdtempSync(join(tmpdir(), 'crewline-json-index-timing-'));
    location = join(sandbox, 'checkpoints');
    warnings = [];
    previousSink = setLogSink((record) => {
      if (record.level === 'warn') warnings.push(record);
    });
    slowEntries.delayMs = 30;
  });
  afterEach(() => {
    slowEntries.delayMs = 0;
    slowEntries.gate = undefined;
    setLogSink(previousSink);
    rmSync(sandbox, { recursive: true, force: true });
  });

  const entries = () => indexedIds(location);

  it('a delete right after the write waits for them: no entry names the deleted file afterwards', async () => {
    const provider = new JsonProvider();
    const [first, second] = await provider.writeBatch(location, [
      buildCheckpointWrite(),
      buildCheckpointWrite(),
    ]);
    // The second entry is the last one queued: without waiting, it is written after the delete.
    expect(await provider.delete(location, second!.id)).toBe(true);
    await provider.close();
    expect(entries()).toEqual([first!.id]);
  });

  it('a prune right after the write waits for them: no entry names a pruned file afterwards', async () => {
    const provider = new JsonProvider();
    const first = buildCheckpointWrite({ metadata: { lineageId: 'pruned-run', parentId: null } });
    const second = buildCheckpointWrite({
      metadata: { lineageId: 'pruned-run', parentId: first.metadata.id },
    });
    const third = buildCheckpointWrite({
      metadata: { lineageId: 'pruned-run', parentId: second.metadata.id },
    });
    await provider.writeBatch(location, [first, second, third]);
    const { removed } = await provider.prune(location, { keep: 1, lineageId: 'pruned-run' });
    expect(removed).toHaveLength(2);
    await provider.close();
    expect(entries()).toEqual([third.metadata.id]);
  });

  it('a location removed before they were written stays removed, with no warning', async () => {
    const provider = new JsonProvider();
    // The entries wait until the location is gone (a 30 ms delay lost that race under load in CI).
    let release = () => {};
    slowEntries.gate = new Promise((resolve) => {
      release = resolve;
    });
    await provider.writeBatch(location, [buildCheckpointWrite(), buildCheckpointWrite()]);
    // The spares this group leaves are created first (a removal racing them is what close() is for).
    const spares = () => readdirSync(join(location, 'main')).filter((name) => name.startsWith('.spare.'));
    for (let attempt = 0; attempt < 200 && spares().length < 4; attempt += 1)
      await new Promise((resolve) => setTimeout(resolve, 5));
    await provider.write(location, buildCheckpointWrite());
    expect(entries()).toEqual([]);
    rmSync(location, { recursive: true });
    release();
    await provider.close();
    expect(existsSync(location)).toBe(false);
    expect(warnings.map((record) => record.message)).toEqual([]);
  });

  it('close() waits for them: every entry is in place once it resolved', async () => {
    const provider = new JsonProvider();
    const stored = await provider.writeBatch(location, [buildCheckpointWrite(), buildCheckpointWrite()]);
    await provider.close();
    expect(entries().sort()).toEqual(stored.map((checkpoint) => checkpoint.id).sort());
  });

  it('close() also waits for writes still in flight, and for what they leave', async () => {
    const provider = new JsonProvider();
    const writing = provider.writeBatch(location, [buildCheckpointWrite(), buildCheckpointWrite()]);
    await provider.close();
    // Nothing of the group is written after close() resolved: a removal right after it is final.
    const ids = entries().sort();
    rmSync(location, { recursive: true });
    const stored = await writing;
    expect(ids).toEqual(stored.map((checkpoint) => checkpoint.id).sort());
    expect(existsSync(location)).toBe(false);
    expect(warnings).toEqual([]);
  });
});
