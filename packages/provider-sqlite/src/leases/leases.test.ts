import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../database/schema.js';
import { SqliteProvider } from '../sqlite-provider.js';
import { raceClaims } from '../test-support/child-processes.js';
import { damagedVariants, databaseImage } from '../test-support/damaged-variants.js';
import { removeTemporaryDatabase, temporaryDatabase } from '../test-support/temporary-database.js';

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
  const provider = (options: ConstructorParameters<typeof SqliteProvider>[0] = {}) => {
    const created = new SqliteProvider(options);
    providers.push(created);
    return created;
  };
  return { provider, location: new SqliteProvider().resolveLocation(raw) };
}

/** A database with `count` checkpoints of one run, closed; returns the run's lineage and ids. */
function databaseWithRun(location: string, count: number) {
  const writer = new SqliteProvider();
  const run = growingRun({ provider: writer, location, tasks: count });
  const ids = writeGrowingCheckpointsSync(run, count);
  writer.close();
  return { lineageId: run.state.lineage.lineageId, ids };
}

function withDatabase<T>(location: string, use: (db: Database.Database) => T, readonly = false): T {
  const db = new Database(location, { readonly });
  try {
    return use(db);
  } finally {
    db.close();
  }
}

function tablesOf(location: string): string[] {
  return withDatabase(
    location,
    (db) => db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all(),
    true,
  ) as string[];
}

function versionOf(location: string): number {
  return withDatabase(location, (db) => db.pragma('user_version', { simple: true }), true) as number;
}

/** Turns a current database into the version 3 layout: no `leases` table. */
function downgradeToVersionThree(location: string, userVersion: number): void {
  withDatabase(location, (db) => {
    db.exec('DROP TABLE leases');
    db.pragma(`user_version = ${userVersion}`);
  });
}

describe('SqliteProvider leases', () => {
  it('keeps a lease as one row keyed by lineage, its end in integer milliseconds', async () => {
    const { provider, location } = setup();
    const { lineageId, ids } = databaseWithRun(location, 2);
    const before = Date.now();
    const lease = await provider().claimLease(location, {
      lineageId,
      owner: 'owner-token',
      checkpointId: ids.at(-1)!,
      holder: 'pid 42 on host-a',
      ttlMs: 30_000,
    });
    const rows = withDatabase(location, (db) => db.prepare('SELECT * FROM leases').all(), true);
    expect(rows).toEqual([
      {
        lineage_id: lineageId,
        owner: 'owner-token',
        holder: 'pid 42 on host-a',
        expires_at: expect.any(Number),
        holder_process: expect.any(String),
      },
    ]);
    const expiresAt = (rows[0] as { expires_at: number }).expires_at;
    expect(Number.isInteger(expiresAt)).toBe(true);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30_000);
    expect(new Date(expiresAt).toISOString()).toBe(lease.expiresAt);
  });

  it("checks a write's lease with one primary-key lookup", () => {
    const { location } = setup();
    databaseWithRun(location, 1);
    const plan = withDatabase(
      location,
      (db) =>
        db
          .prepare('EXPLAIN QUERY PLAN SELECT owner, holder, expires_at FROM leases WHERE lineage_id = ?')
          .all('x') as { detail: string }[],
      true,
    );
    expect(plan.map((step) => step.detail)).toEqual(['SEARCH leases USING PRIMARY KEY (lineage_id=?)']);
  });

  it('8 processes claiming one head at once: one is granted, 7 get a conflict naming it, no SQLITE_BUSY', async () => {
    const { provider, location } = setup();
    const { lineageId, ids } = databaseWithRun(location, 2);
    const results = await raceClaims(location, lineageId, ids.at(-1)!, 8, 'open-first');
    const outcomes = results.map((result) => {
      expect(result.stderr).not.toMatch(/SQLITE_BUSY|database is locked/);
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as {
        granted?: true;
        conflict?: { holder: string; expiresInMs: number };
        message?: string;
      };
    });
    const winners = outcomes.flatMap((outcome, index) => (outcome.granted ? [index] : []));
    expect(winners).toHaveLength(1);
    const holder = `claimer owner-${winners[0]}`;
    for (const outcome of outcomes.filter((candidate) => !candidate.granted)) {
      expect(outcome.conflict).toMatchObject({ lineageId, holder });
      expect(outcome.message).toContain(holder);
    }
    const lease = withDatabase(location, (db) => db.prepare('SELECT owner FROM leases').pluck().all(), true);
    expect(lease).toEqual([`owner-${winners[0]}`]);
    // The database stays sound and readable by the parent.
    expect(await provider().list(location)).toHaveLength(2);
  }, 120_000);

  it('creates no database for a claim that cannot succeed, a renewal or a release', async () => {
    const { provider, location } = setup();
    const sqlite = provider();
    const token = { lineageId: 'run-1', owner: 'owner-1' };
    const claim = sqlite.claimLease(location, {
      ...token,
      checkpointId: '20260101T000000000-00000000',
      holder: 'h',
      ttlMs: 1000,
    });
    await expect(claim).rejects.toMatchObject({
      code: 'conflict',
      details: { lineageId: 'run-1', headId: null },
    });
    await expect(sqlite.renewLease(location, token, 1000)).rejects.toMatchObject({ code: 'conflict' });
    await sqlite.releaseLease(location, token);
    expect(existsSync(location)).toBe(false);
    // A claim that starts a new run creates the database.
    await sqlite.claimLease(location, { ...token, checkpointId: null, holder: 'h', ttlMs: 1000 });
    expect(existsSync(location)).toBe(true);
  });

  it('refuses claims, renewals and releases on a database that failed quick_check, leaving it as it was', async () => {
    const { location } = setup();
    const { lineageId, ids } = databaseWithRun(location, 40);
    const variant = damagedVariants(databaseImage(location)).find(
      (candidate) => candidate.name === 'last page overwritten with garbage',
    )!;
    const damaged = join(location, '..', 'damaged.db');
    writeFileSync(damaged, variant.bytes);
    const sqlite = new SqliteProvider();
    cleanups.push(() => sqlite.close());
    const token = { lineageId, owner: 'owner-1' };
    const actions: (() => Promise<unknown>)[] = [
      () => sqlite.claimLease(damaged, { ...token, checkpointId: ids.at(-1)!, holder: 'h', ttlMs: 1000 }),
      () => sqlite.renewLease(damaged, token, 1000),
      () => sqlite.releaseLease(damaged, token),
    ];
    for (const action of actions) {
      const refusal = await Promise.resolve()
        .then(action)
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(CrewlineError.hasCode(refusal, 'corrupt_checkpoint'), String(refusal)).toBe(true);
    }
    expect(readFileSync(damaged).equals(variant.bytes)).toBe(true);
  });
});

describe('schema version 4: the leases table', () => {
  it('reads a version 3 database as it is, and the first claim upgrades it', async () => {
    const { provider, location } = setup();
    const { lineageId, ids } = databaseWithRun(location, 3);
    downgradeToVersionThree(location, 3);

    const reader = provider();
    expect((await reader.list(location)).map((checkpoint) => checkpoint.id)).toEqual(ids);
    expect(await reader.stats(location)).toMatchObject({ schemaVersion: 3, checkpoints: 3 });
    expect(versionOf(location)).toBe(3);
    expect(tablesOf(location)).not.toContain('leases');

    await reader.claimLease(location, {
      lineageId,
      owner: 'owner-1',
      checkpointId: ids.at(-1)!,
      holder: 'h',
      ttlMs: 60_000,
    });
    expect(versionOf(location)).toBe(SCHEMA_VERSION);
    expect(tablesOf(location)).toContain('leases');
    expect((await reader.list(location)).map((checkpoint) => checkpoint.id)).toEqual(ids);
  });

  it('upgrades a version 3 database on its first write, and recognises one whose user_version was lost', async () => {
    for (const userVersion of [3, 0]) {
      const { provider, location } = setup();
      const { ids } = databaseWithRun(location, 2);
      downgradeToVersionThree(location, userVersion);
      const reader = provider();
      expect((await reader.stats(location))?.schemaVersion).toBe(3);
      expect((await reader.list(location)).map((checkpoint) => checkpoint.id)).toEqual(ids);
      const run = growingRun({ provider: reader, location, tasks: 1 });
      const written = run.state.writeCheckpointSync({ trigger: run.step() });
      expect(versionOf(location)).toBe(SCHEMA_VERSION);
      expect(tablesOf(location)).toContain('leases');
      expect((await reader.list(location)).map((checkpoint) => checkpoint.id)).toEqual([...ids, written.id]);
    }
  });

  it('recognises a version 4 database whose user_version was lost by its leases table', async () => {
    const { provider, location } = setup();
    databaseWithRun(location, 1);
    withDatabase(location, (db) => {
      db.prepare("DELETE FROM crewline_meta WHERE key IN ('segmented_arrays', 'event_references')").run();
      db.exec('ALTER TABLE leases DROP COLUMN holder_process');
      db.pragma('user_version = 0');
    });
    expect((await provider().stats(location))?.schemaVersion).toBe(4);
  });

  it('recognises a version 5 database whose user_version was lost by its segments marker, and upgrades a version 4 one on its first write', async () => {
    const { provider, location } = setup();
    databaseWithRun(location, 1);
    withDatabase(location, (db) => {
      db.prepare("DELETE FROM crewline_meta WHERE key = 'event_references'").run();
      db.exec('ALTER TABLE leases DROP COLUMN holder_process');
      db.pragma('user_version = 0');
    });
    expect((await provider().stats(location))?.schemaVersion).toBe(5);
    withDatabase(location, (db) => {
      db.prepare("DELETE FROM crewline_meta WHERE key = 'segmented_arrays'").run();
      db.pragma('user_version = 4');
    });
    const reader = provider();
    expect((await reader.stats(location))?.schemaVersion).toBe(4);
    const run = growingRun({ provider: reader, location, tasks: 1 });
    run.state.writeCheckpointSync({ trigger: run.step() });
    expect(versionOf(location)).toBe(SCHEMA_VERSION);
  });
});
