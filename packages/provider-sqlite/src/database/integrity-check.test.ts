import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteProvider } from '../sqlite-provider.js';
import { damagedVariants, databaseImage, quickCheckOf } from '../test-support/damaged-variants.js';
import { removeTemporaryDatabase, temporaryDatabase } from '../test-support/temporary-database.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/**
 * A healthy database of 40 checkpoints (enough for the `checkpoints` table to need an interior page
 * and several leaves), closed and with its WAL checkpointed into the file; returns its directory,
 * its image and the ids it holds.
 */
function healthyDatabase() {
  const raw = temporaryDatabase();
  cleanups.push(() => removeTemporaryDatabase(raw));
  const writer = new SqliteProvider();
  const location = writer.resolveLocation(raw);
  const ids = writeGrowingCheckpointsSync(growingRun({ provider: writer, location, tasks: 20 }), 40);
  writer.close();
  return { directory: join(raw, '..'), image: databaseImage(location), ids };
}

/** Writes a variant to its own file, named after it. */
function placeVariant(directory: string, name: string, bytes: Buffer): string {
  const location = join(directory, `${name.toLowerCase().replaceAll(/[^a-z0-9]+/g, '-')}.db`);
  writeFileSync(location, bytes);
  return location;
}

/**
 * Runs `action` and returns the error it threw (undefined when it succeeded); records a problem
 * when that error is not a typed crewline error naming the database file.
 */
async function outcomeOf(
  problems: string[],
  label: string,
  location: string,
  action: () => unknown,
): Promise<CrewlineError | undefined> {
  try {
    await action();
    return undefined;
  } catch (error) {
    if (!CrewlineError.isInstance(error)) {
      problems.push(`${label}: threw an untyped ${String(error)}`);
      return undefined;
    }
    if (!error.message.includes(location))
      problems.push(`${label}: "${error.message}" does not name the file`);
    return error;
  }
}

describe('a damaged database', () => {
  it('gives data or a typed error naming the file for every read, and takes no write when quick_check fails', async () => {
    const { directory, image, ids } = healthyDatabase();
    const problems: string[] = [];
    let refused = 0;
    for (const variant of damagedVariants(image)) {
      const location = placeVariant(directory, variant.name, variant.bytes);
      // SQLite's own verdict, on a copy, so that the provider opens the file as it was damaged.
      const verdict = quickCheckOf(placeVariant(directory, `${variant.name} check`, variant.bytes));
      const provider = new SqliteProvider();
      const attempt = (what: string, action: () => unknown) =>
        outcomeOf(problems, `${variant.name}, ${what}`, location, action);
      await attempt('list', () => provider.list(location));
      await attempt('list by branch', () => provider.list(location, { branch: 'main' }));
      await attempt('latest', () => provider.latest(location));
      await attempt('stats', () => provider.stats(location));
      for (const id of ids) await attempt(`read ${id}`, () => provider.read(location, id));
      const run = growingRun({ provider, location, tasks: 1 });
      const writes = [
        await attempt('writeSync', () => run.state.writeCheckpointSync({ trigger: run.step() })),
        await attempt('write', () => run.state.writeCheckpoint({ trigger: run.step() })),
        await attempt('delete', () => provider.delete(location, ids[0]!)),
        await attempt('collectGarbage', () => provider.collectGarbage(location)),
      ];
      provider.close();
      if (verdict === 'ok') continue;
      refused += 1;
      const [writeSync, write] = writes;
      if (writeSync === undefined || write === undefined) {
        problems.push(`${variant.name}: a write was accepted although quick_check says ${verdict}`);
      }
      if (!readFileSync(location).equals(variant.bytes)) problems.push(`${variant.name}: the file changed`);
    }
    expect(problems).toEqual([]);
    // Every variant is damaged enough for SQLite to notice.
    expect(refused).toBe(damagedVariants(image).length);
  });

  it('still lists a database whose data page is damaged, and refuses writes saying why and how to recover', async () => {
    const { directory, image, ids } = healthyDatabase();
    const variant = damagedVariants(image).find(
      (candidate) => candidate.name === 'last page overwritten with garbage',
    )!;
    const location = placeVariant(directory, 'damaged', variant.bytes);
    const provider = new SqliteProvider();
    cleanups.push(() => provider.close());
    // The checkpoints table is intact: a user can still see, and get out, what it holds.
    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual(ids);
    const run = growingRun({ provider, location, tasks: 1 });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const refusal = await outcomeOf([], 'write', location, () =>
        run.state.writeCheckpointSync({ trigger: run.step() }),
      );
      expect(CrewlineError.hasCode(refusal, 'corrupt_checkpoint'), String(refusal)).toBe(true);
      expect(refusal!.message).toMatch(/^\[provider-sqlite\] /);
      expect(refusal!.message).toContain(`"${location}" failed SQLite's quick_check`);
      expect(refusal!.message).toMatch(/restore it from a backup/);
      expect(refusal!.message).toContain(`sqlite3 "${location}" ".recover" | sqlite3 recovered.db`);
    }
    expect(readFileSync(location).equals(variant.bytes)).toBe(true);
    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual(ids);
  });

  it('refuses a file that is not a SQLite database with a typed error on open', async () => {
    const { directory, image } = healthyDatabase();
    for (const name of ['random bytes', 'a bare SQLite header', 'header zeroed']) {
      const variant = damagedVariants(image).find((candidate) => candidate.name === name)!;
      const location = placeVariant(directory, name, variant.bytes);
      const provider = new SqliteProvider();
      cleanups.push(() => provider.close());
      const problems: string[] = [];
      const error = await outcomeOf(problems, name, location, () => provider.list(location));
      expect(problems).toEqual([]);
      expect(error?.message, name).toMatch(/is not a SQLite database|failed SQLite's quick_check/);
    }
  });
});
