import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { type CheckpointProvider, loadCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShoppingList } from './shopping-list.js';
import { catalog, runStorageExample } from './storage-example.js';

describe.each([
  ['json', () => new JsonProvider(), 'checkpoints'],
  ['sqlite', () => new SqliteProvider(), 'checkpoints.db'],
] as const)('the storage example with %s', (kind, makeProvider, name) => {
  let directory: string;
  let provider: CheckpointProvider;

  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), `storage-example-${kind}-`));
    provider = makeProvider();
  });
  afterAll(async () => {
    await provider.close?.();
    rmSync(directory, { recursive: true, force: true });
  });

  it('writes, lists and restores checkpoints with their lineage', async () => {
    const location = join(directory, name);
    const report = await runStorageExample(provider, location);
    const [first, second, forked] = report.written;

    // Every write names the previous one; the fork's first write names the checkpoint it left from.
    expect([first!.parentId, second!.parentId, forked!.parentId]).toEqual([null, first!.id, second!.id]);
    expect([first!.branch, second!.branch, forked!.branch]).toEqual(['main', 'main', 'what-if']);
    expect(forked!.lineageId).not.toBe(first!.lineageId);

    // The listing is what was written, oldest first, with entity summaries.
    expect(report.listed.map((entry) => entry.id)).toEqual(report.written.map((entry) => entry.id));
    expect(report.listed.map((entry) => entry.entities[0])).toMatchObject([
      { name: 'shopping-list', completed: 0, total: 2 },
      { name: 'shopping-list', completed: 1, total: 2 },
      { name: 'shopping-list', completed: 1, total: 3 },
    ]);

    // Restored as it was when written, then continued on its own lineage position.
    expect(report.restored.items).toEqual(['1 bread', '6 apples']);
    expect(report.continued.parentId).toBe(first!.id);
    expect(report.continued.branch).toBe('main');

    // What the continued write holds, read back by reference from storage.
    const loaded = await loadCheckpoint(report.continued.reference, catalog);
    expect(loaded.document.inputs).toBeDefined();
    expect(ShoppingList.fromSnapshot(loaded.document.entities[0]!).items).toEqual([
      { name: 'bread', quantity: 1, bought: false },
      { name: 'apples', quantity: 6, bought: true },
    ]);
    expect(loaded.document.events.map((event) => event.methodName)).toEqual(['plan', 'buy_apples']);
    expect(await provider.list(location)).toHaveLength(4);
  });

  it('keeps each provider to its own form on disk', () => {
    const entries = readdirSync(directory);
    if (kind === 'json') expect(entries).toEqual(['checkpoints']);
    else expect(entries.filter((entry) => !entry.startsWith('checkpoints.db'))).toEqual([]);
  });
});
