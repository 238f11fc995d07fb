import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { CrewlineError } from '@crewline/events';
import { growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import { afterEach, expect, it } from 'vitest';
import { SqliteProvider } from '../sqlite-provider.js';
import { removeTemporaryDatabase, temporaryDatabase } from '../test-support/temporary-database.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A closed database of 40 checkpoints, its WAL copied back and removed; returns its location and ids. */
function closedDatabase() {
  const raw = temporaryDatabase();
  cleanups.push(() => removeTemporaryDatabase(raw));
  const writer = new SqliteProvider();
  const location = writer.resolveLocation(raw);
  const ids = writeGrowingCheckpointsSync(growingRun({ provider: writer, location, tasks: 20 }), 40);
  writer.close();
  return { location, ids };
}

const sideFiles = (location: string) =>
  [`${location}-wal`, `${location}-shm`].filter((path) => existsSync(path));

it('reading a cut database leaves no -wal or -shm file beside it', async () => {
  const { location } = closedDatabase();
  expect(sideFiles(location)).toEqual([]);
  const image = readFileSync(location);
  writeFileSync(location, image.subarray(0, Math.floor(image.length / 2)));
  const reader = new SqliteProvider();
  const failure = await reader.list(location).then(
    () => undefined,
    (error: unknown) => error,
  );
  reader.close();
  expect(CrewlineError.hasCode(failure, 'corrupt_checkpoint')).toBe(true);
  expect(sideFiles(location)).toEqual([]);
});

it('a read beside a live writer leaves the writer its -wal and -shm, and the writer goes on', async () => {
  const { location, ids } = closedDatabase();
  const writer = new SqliteProvider();
  const run = growingRun({ provider: writer, location, tasks: 20 });
  writeGrowingCheckpointsSync(run, 1);
  const live = sideFiles(location);
  expect(live).toHaveLength(2);
  const reader = new SqliteProvider();
  expect((await reader.list(location)).length).toBeGreaterThanOrEqual(ids.length);
  reader.close();
  expect(sideFiles(location)).toEqual(live);
  writeGrowingCheckpointsSync(run, 1);
  writer.close();
  const after = new SqliteProvider();
  expect((await after.list(location)).length).toBe(ids.length + 2);
  after.close();
});
