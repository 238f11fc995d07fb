import { readDocument } from '@crewline/runtime-state';
import { expect, it } from 'vitest';
import { PostgresProvider } from './postgres-provider.js';
import { spawnWriters } from './test-support/child-processes.js';
import { describeWithPostgres, testServerUrl, useTemporaryLocations } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

describeWithPostgres('many processes, one database', () => {
  it('4 processes × 500 checkpoints into one schema: none lost, every chain unbroken, no error surfaced', {
    timeout: 300_000,
  }, async () => {
    const provider = temporary.track(new PostgresProvider({ poolSize: 2 }));
    const location = temporary.location();
    const resolved = provider.resolveLocation(location);
    const writers = 4;
    const perWriter = 500;
    // The writers get the redacted location and the password through PGPASSWORD, as workers would.
    const password = decodeURIComponent(new URL(testServerUrl()!).password);
    const outputs = await spawnWriters(resolved, writers, perWriter, password);
    expect(outputs.map((output) => JSON.parse(output))).toEqual(
      Array.from({ length: writers }, () => ({ written: perWriter })),
    );
    const listed = await provider.list(resolved);
    expect(listed.length).toBe(writers * perWriter);
    expect(new Set(listed.map((entry) => entry.id)).size).toBe(listed.length);
    const runs = new Map<string, typeof listed>();
    for (const entry of listed) runs.set(entry.lineageId, [...(runs.get(entry.lineageId) ?? []), entry]);
    expect(runs.size).toBe(writers);
    for (const run of runs.values()) {
      expect(run.length).toBe(perWriter);
      expect(run.map((entry) => entry.parentId)).toEqual([
        null,
        ...run.slice(0, -1).map((entry) => entry.id),
      ]);
      for (const entry of [run[0]!, run[249]!, run.at(-1)!]) {
        const document = await readDocument(provider, resolved, entry.id);
        expect(document.events.length).toBe(entry.eventCount);
      }
    }
    // Each writer appended to one event stream: incremental across processes too.
    expect((await provider.stats(resolved))?.streams).toBe(writers);
  });
});
