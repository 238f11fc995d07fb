import { spawnSync } from 'node:child_process';
import { CrewlineError } from '@crewline/events';
import { growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import type { LeaseRequest } from '@crewline/runtime-state';
import { thisProcess } from '@crewline/runtime-state/internal';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../database/schema.js';
import { SqliteProvider } from '../sqlite-provider.js';
import { raceClaims, runScript } from '../test-support/child-processes.js';
import { removeTemporaryDatabase, temporaryDatabase } from '../test-support/temporary-database.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function setup() {
  const raw = temporaryDatabase();
  const provider = new SqliteProvider();
  cleanups.push(() => {
    provider.close();
    removeTemporaryDatabase(raw);
  });
  const location = provider.resolveLocation(raw);
  const writer = new SqliteProvider();
  const run = growingRun({ provider: writer, location, tasks: 2 });
  const ids = writeGrowingCheckpointsSync(run, 2);
  writer.close();
  const lineageId = run.state.lineage.lineageId;
  const request = (owner: string, ttlMs = 60_000): LeaseRequest => ({
    lineageId,
    owner,
    checkpointId: ids.at(-1)!,
    holder: `holder ${owner}`,
    ttlMs,
  });
  return { provider, location, lineageId, head: ids.at(-1)!, request };
}

function withDatabase<T>(location: string, use: (db: Database.Database) => T): T {
  const db = new Database(location);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

/** Starts a child process that claims the head and stays alive holding it; resolves once it holds it. */
async function startHolder(location: string, lineageId: string, head: string, owner: string) {
  let claimed: () => void;
  const holding = new Promise<void>((resolve) => {
    claimed = resolve;
  });
  const child = runScript(
    './lease-holder-process.ts',
    [location, lineageId, head, owner, '60000'],
    (text) => {
      if (text.includes('claimed')) claimed();
    },
  );
  cleanups.push(() => child.kill('SIGKILL'));
  await Promise.race([
    holding,
    child.done.then((result) => {
      throw new Error(`the holder process ended before claiming: ${result.stderr}`);
    }),
  ]);
  return child;
}

/** The pid of a process that has exited (and was reaped) by the time this returns. */
function deadPid(): number {
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(gone.stdout.toString());
}

async function refusal(action: Promise<unknown>): Promise<CrewlineError> {
  const error = await action.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(CrewlineError.hasCode(error, 'conflict'), String(error)).toBe(true);
  return error as CrewlineError;
}

describe('SqliteProvider leases of holders whose process is gone', () => {
  it('a holder killed with SIGKILL is taken over at once, well before its lease runs out, and stays fenced out', async () => {
    const { provider, location, lineageId, head, request } = setup();
    const holder = await startHolder(location, lineageId, head, 'killed');
    // Alive, it keeps the run.
    const refused = await refusal(provider.claimLease(location, request('next')));
    expect(refused.details).toMatchObject({
      lineageId,
      holder: `holder killed, pid ${holder.pid}`,
      holderRunsHere: true,
    });
    // Waiting for its lease to run out would not help: the refusal says that it runs.
    expect(refused.message).toContain('wait for it to end (its process is running on this machine)');

    holder.kill('SIGKILL');
    expect((await holder.done).signal).toBe('SIGKILL');
    const startedAt = performance.now();
    const lease = await provider.claimLease(location, request('next'));
    expect(lease.owner).toBe('next');
    // The holder's lease had 60 s left.
    expect(performance.now() - startedAt).toBeLessThan(5_000);
    expect(Date.parse(lease.expiresAt)).toBeGreaterThan(Date.now() + 50_000);
    // The dead holder's token holds nothing any more, and the new holder's row names this process.
    await refusal(provider.renewLease(location, { lineageId, owner: 'killed' }, 60_000));
    const recorded = withDatabase(location, (db) =>
      db.prepare('SELECT holder_process FROM leases WHERE lineage_id = ?').pluck().get(lineageId),
    );
    expect(JSON.parse(recorded as string)).toMatchObject({ owner: 'next', pid: process.pid });
    // And a third process's claim is refused again: the taker holds it, alive.
    const other = new SqliteProvider();
    cleanups.push(() => other.close());
    expect((await refusal(other.claimLease(location, request('third')))).details).toMatchObject({
      holder: 'holder next',
    });
  }, 60_000);

  it('a holder in this process is refused to another owner, however its pid reads', async () => {
    const { provider, location, request } = setup();
    await provider.claimLease(location, request('first'));
    const other = new SqliteProvider();
    cleanups.push(() => other.close());
    expect((await refusal(other.claimLease(location, request('second')))).details).toMatchObject({
      holderRunsHere: true,
    });
  });

  it.each([
    ['another host', { host: 'another-host' }],
    ['another pid namespace (a container sharing the volume)', { pidNamespace: 'pid:[1]' }],
    ['another boot of the machine', { bootId: 'another-boot' }],
    ['the record of another owner (left by a claim that did not write it)', { owner: 'someone-before' }],
  ])('a dead pid recorded on %s proves nothing: the lease is waited out', async (_, elsewhere) => {
    const { provider, location, lineageId, request } = setup();
    await provider.claimLease(location, request('elsewhere', 600));
    const here = thisProcess();
    const record = { owner: 'elsewhere', ...here, pid: deadPid(), ...elsewhere };
    withDatabase(location, (db) =>
      db
        .prepare('UPDATE leases SET holder_process = ? WHERE lineage_id = ?')
        .run(JSON.stringify(record), lineageId),
    );
    const other = new SqliteProvider();
    cleanups.push(() => other.close());
    const refused = await refusal(other.claimLease(location, request('next')));
    // It may have died where this machine cannot see: its lease runs out.
    expect(refused.details?.holderRunsHere).toBeUndefined();
    expect(refused.message).toContain('a holder that died stops renewing and its lease runs out');
    await new Promise((resolve) => setTimeout(resolve, 700));
    await expect(other.claimLease(location, request('next'))).resolves.toMatchObject({ owner: 'next' });
  });

  it('a lease row without a recorded process (written before schema version 7) is waited out', async () => {
    const { provider, location, lineageId, request } = setup();
    await provider.claimLease(location, request('older', 600));
    withDatabase(location, (db) =>
      db.prepare('UPDATE leases SET holder_process = NULL WHERE lineage_id = ?').run(lineageId),
    );
    const other = new SqliteProvider();
    cleanups.push(() => other.close());
    await refusal(other.claimLease(location, request('next')));
    await new Promise((resolve) => setTimeout(resolve, 700));
    await expect(other.claimLease(location, request('next'))).resolves.toMatchObject({ owner: 'next' });
  });
});

describe('schema version 7: the process holding a lease', () => {
  /** Turns a current database into the version 6 layout: no `holder_process` column. */
  function downgradeToVersionSix(location: string, userVersion: number): void {
    withDatabase(location, (db) => {
      db.exec('ALTER TABLE leases DROP COLUMN holder_process');
      db.pragma(`user_version = ${userVersion}`);
    });
  }

  function columnsOf(location: string): string[] {
    return withDatabase(location, (db) =>
      db.prepare("SELECT name FROM pragma_table_info('leases') ORDER BY cid").pluck().all(),
    ) as string[];
  }

  it('reads a version 6 database as it is, and its first claim upgrades it', async () => {
    const { provider, location, request } = setup();
    downgradeToVersionSix(location, 6);
    expect(await provider.stats(location)).toMatchObject({ schemaVersion: 6, checkpoints: 2 });
    await provider.claimLease(location, request('first'));
    expect(SCHEMA_VERSION).toBe(7);
    expect(withDatabase(location, (db) => db.pragma('user_version', { simple: true }))).toBe(7);
    expect(columnsOf(location)).toEqual(['lineage_id', 'owner', 'holder', 'expires_at', 'holder_process']);
  });

  it('recognises a version 7 database whose user_version was lost by its column, and a version 6 one without it', async () => {
    const { provider, location } = setup();
    withDatabase(location, (db) => db.pragma('user_version = 0'));
    expect((await provider.stats(location))?.schemaVersion).toBe(7);
    downgradeToVersionSix(location, 0);
    const reader = new SqliteProvider();
    cleanups.push(() => reader.close());
    expect((await reader.stats(location))?.schemaVersion).toBe(6);
  });

  it('8 processes opening a version 6 database at once upgrade it once; one claim is granted, no error', async () => {
    const { provider, location, lineageId, head } = setup();
    downgradeToVersionSix(location, 6);
    const results = await raceClaims(location, lineageId, head, 8, 'open-in-race');
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).not.toMatch(/SQLITE_BUSY|database is locked|duplicate column/);
    }
    const granted = results.filter((result) => (JSON.parse(result.stdout) as { granted?: true }).granted);
    expect(granted).toHaveLength(1);
    expect(columnsOf(location)).toEqual(['lineage_id', 'owner', 'holder', 'expires_at', 'holder_process']);
    expect(await provider.stats(location)).toMatchObject({ schemaVersion: 7, checkpoints: 2 });
  }, 120_000);
});
