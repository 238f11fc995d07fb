import { readFileSync } from 'node:fs';
import { CrewlineError } from '@crewline/events';
import { growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteProvider } from '../sqlite-provider.js';
import { removeTemporaryDatabase, temporaryDatabase } from '../test-support/temporary-database.js';
import { SCHEMA_VERSION } from './schema.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function setup() {
  const raw = temporaryDatabase();
  const providers: SqliteProvider[] = [];
  cleanups.push(() => {
    for (const provider of providers) provider.close();
    removeTemporaryDatabase(raw);
  });
  const provider = () => {
    const created = new SqliteProvider();
    providers.push(created);
    return created;
  };
  return { provider, location: new SqliteProvider().resolveLocation(raw) };
}

/** Runs `change` on a connection of its own, as another program (or a careless user) would. */
function changeDatabase(location: string, change: (db: Database.Database) => void): void {
  const db = new Database(location);
  try {
    change(db);
  } finally {
    db.close();
  }
}

function layout(location: string) {
  const db = new Database(location, { readonly: true });
  try {
    const indexes = db
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'checkpoints_by_%'")
      .pluck()
      .all();
    return { version: db.pragma('user_version', { simple: true }), indexes };
  } finally {
    db.close();
  }
}

describe('a database whose user_version was lost', () => {
  it("is recognised by crewline's tables: reads list every checkpoint, and the first write restores the version", async () => {
    const { provider, location } = setup();
    const writer = provider();
    const run = growingRun({ provider: writer, location, tasks: 5 });
    const ids = writeGrowingCheckpointsSync(run, 12);
    writer.close();
    changeDatabase(location, (db) => db.pragma('user_version = 0'));

    const reader = provider();
    expect((await reader.list(location)).map((checkpoint) => checkpoint.id)).toEqual(ids);
    expect((await reader.latest(location))?.id).toBe(ids.at(-1));
    expect(await reader.stats(location)).toMatchObject({ schemaVersion: SCHEMA_VERSION, checkpoints: 12 });
    // Reads open the database read-only: they leave the version as they found it.
    expect(layout(location).version).toBe(0);

    const next = growingRun({ provider: reader, location, tasks: 1 });
    const written = next.state.writeCheckpointSync({ trigger: next.step() });
    expect(layout(location).version).toBe(SCHEMA_VERSION);
    expect((await reader.list(location)).map((checkpoint) => checkpoint.id)).toEqual([...ids, written.id]);
  });

  it('treats the tables of a version 1 layout as version 1, and upgrades them on the first write', async () => {
    const { provider, location } = setup();
    const writer = provider();
    const ids = writeGrowingCheckpointsSync(growingRun({ provider: writer, location, tasks: 2 }), 3);
    writer.close();
    changeDatabase(location, (db) => {
      // Version 1 had these indexes, and no leases table (version 4 added it).
      db.exec(
        'CREATE INDEX checkpoints_by_branch ON checkpoints (branch, id); CREATE INDEX checkpoints_by_lineage ON checkpoints (lineage_id, id); DROP TABLE leases;',
      );
      db.pragma('user_version = 0');
    });

    const reader = provider();
    expect((await reader.list(location, { branch: 'main' })).map((checkpoint) => checkpoint.id)).toEqual(ids);
    expect((await reader.stats(location))?.schemaVersion).toBe(1);
    const next = growingRun({ provider: reader, location, tasks: 1 });
    next.state.writeCheckpointSync({ trigger: next.step() });
    expect(layout(location)).toEqual({ version: SCHEMA_VERSION, indexes: [] });
  });

  it("refuses, and leaves untouched, a database with a crewline_meta table that is not crewline's", async () => {
    const { provider, location } = setup();
    changeDatabase(location, (db) => {
      db.exec(
        'CREATE TABLE crewline_meta (key TEXT PRIMARY KEY, value TEXT); CREATE TABLE customers (id INTEGER PRIMARY KEY);',
      );
    });
    const before = readFileSync(location);
    const writer = provider();
    const run = growingRun({ provider: writer, location, tasks: 1 });
    for (const action of [
      () => writer.list(location),
      () => run.state.writeCheckpointSync({ trigger: run.step() }),
      () => run.state.writeCheckpoint({ trigger: run.step() }),
    ]) {
      let refusal: unknown;
      try {
        await action();
      } catch (error) {
        refusal = error;
      }
      expect(CrewlineError.hasCode(refusal, 'invalid_config'), String(refusal)).toBe(true);
      expect((refusal as Error).message).toContain(
        `"${location}" is a SQLite database of another application`,
      );
    }
    expect(readFileSync(location).equals(before)).toBe(true);
  });

  it("refuses crewline's table names without crewline's marker", async () => {
    const { provider, location } = setup();
    changeDatabase(location, (db) => {
      for (const table of ['crewline_meta', 'checkpoints', 'streams', 'events', 'chunks']) {
        db.exec(`CREATE TABLE ${table} (key TEXT PRIMARY KEY, value TEXT)`);
      }
    });
    const writer = provider();
    const run = growingRun({ provider: writer, location, tasks: 1 });
    await expect(writer.list(location)).rejects.toThrow(/another application/);
    expect(() => run.state.writeCheckpointSync({ trigger: run.step() })).toThrow(/another application/);
  });
});
