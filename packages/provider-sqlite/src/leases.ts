import type { CrewlineError } from '@crewline/events';
import type { Lease, LeaseRequest, LeaseToken } from '@crewline/runtime-state';
import type Database from 'better-sqlite3';
import type { Connection } from './connection.js';
import { sqliteError } from './errors.js';

type Statement = Database.Statement<unknown[], unknown>;

/** The prepared statements of the `leases` table (see schema.ts), on writable connections only. */
export interface LeaseStatements {
  /** `[owner, holder, expires_at]` of a lineage's lease (raw: the write path reads it). */
  get: Statement;
  put: Statement;
  extend: Statement;
  release: Statement;
}

/**
 * Prepared on writable connections only: those always have the current layout, while a read-only
 * connection may be open on an older one without the table (reads never need it).
 */
export function prepareLeaseStatements(db: Database.Database): LeaseStatements {
  return {
    get: db.prepare('SELECT owner, holder, expires_at FROM leases WHERE lineage_id = ?').raw(true),
    put: db.prepare(
      `INSERT INTO leases (lineage_id, owner, holder, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (lineage_id) DO UPDATE SET owner = excluded.owner, holder = excluded.holder,
         expires_at = excluded.expires_at`,
    ),
    extend: db.prepare('UPDATE leases SET expires_at = ? WHERE lineage_id = ? AND owner = ?'),
    release: db.prepare('DELETE FROM leases WHERE lineage_id = ? AND owner = ?'),
  };
}

type LeaseRow = [owner: string, holder: string, expiresAt: number];

/** A lease row as a connection read it, and `PRAGMA data_version` then (see `Connection.knownLease`). */
export interface KnownLease {
  lineageId: string;
  row: LeaseRow | undefined;
  dataVersion: number;
}

function leaseStatements(connection: Connection): LeaseStatements {
  // Every method that reaches here opened the database for writing first.
  return connection.leases!;
}

/** "850 ms", "12.3 s", "4 min 5 s": how long a lease has left, for people. */
function durationText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

function heldByOther(
  lineageId: string,
  holder: string,
  expiresInMs: number,
  consequence: string,
): CrewlineError {
  return sqliteError(
    'conflict',
    `run "${lineageId}" is being continued by ${holder}, whose lease has ${durationText(expiresInMs)} left; ${consequence}`,
    { details: { lineageId, holder, expiresInMs } },
  );
}

function notTheHead(lineageId: string, checkpointId: string | null, headId: string | null): CrewlineError {
  const message =
    checkpointId === null
      ? `run "${lineageId}" already has checkpoints (its head is "${headId}"); claim its head to continue it, or start a new run`
      : headId === null
        ? `checkpoint "${checkpointId}" is not the head of run "${lineageId}", which has no checkpoint; fork from it instead (onConflict: 'fork')`
        : `checkpoint "${checkpointId}" is no longer the head of run "${lineageId}" (someone continued it: its head is "${headId}"); fork from it instead (onConflict: 'fork'), or continue the head`;
  return sqliteError('conflict', message, { details: { lineageId, headId } });
}

/**
 * The refusal of a claim of a checkpoint in a database that does not exist yet (no file is created
 * for a claim that cannot succeed).
 */
export function noSuchHead(lineageId: string, checkpointId: string): CrewlineError {
  return notTheHead(lineageId, checkpointId, null);
}

/** The refusal of a renewal in a database that does not exist (nothing is created for it). */
export function noLeaseWithoutDatabase(location: string, lineageId: string): CrewlineError {
  return sqliteError(
    'conflict',
    `this run holds no lease on run "${lineageId}": database ${location} does not exist; stop writing`,
    { details: { lineageId } },
  );
}

function leaseOf(connection: Connection, lineageId: string): LeaseRow | undefined {
  return leaseStatements(connection).get.get(lineageId) as LeaseRow | undefined;
}

/**
 * Grants `request` when `checkpointId` is the lineage's newest checkpoint and no other owner holds an
 * unexpired lease (an expired one is taken over; the same owner claims again). Runs inside the
 * caller's `BEGIN IMMEDIATE` transaction. Someone else's lease is reported before a moved head: it
 * says who is continuing the run.
 */
export function claimLeaseIn(connection: Connection, request: LeaseRequest): Lease {
  const { lineageId, owner, checkpointId, holder, ttlMs } = request;
  connection.knownLease = undefined;
  const now = Date.now();
  const current = leaseOf(connection, lineageId);
  if (current !== undefined && current[0] !== owner && current[2] > now) {
    throw heldByOther(
      lineageId,
      current[1],
      current[2] - now,
      "wait for it to end (a holder that died stops renewing and its lease runs out), or fork instead (onConflict: 'fork')",
    );
  }
  const head = connection.statements.latest.lineage.get(lineageId) as { id: string } | undefined;
  const headId = head?.id ?? null;
  if (headId !== checkpointId) throw notTheHead(lineageId, checkpointId, headId);
  const expiresAt = now + ttlMs;
  leaseStatements(connection).put.run(lineageId, owner, holder, expiresAt);
  return { lineageId, owner, holder, expiresAt: new Date(expiresAt).toISOString() };
}

/** Why `owner` no longer holds the lease of `lineageId`, as the conflict its writes and renewals get. */
function lost(
  lineageId: string,
  owner: string,
  current: LeaseRow | undefined,
  now: number,
  what: string,
): CrewlineError {
  if (current !== undefined && current[0] !== owner && current[2] > now) {
    return heldByOther(lineageId, current[1], current[2] - now, `${what}; this run must stop writing`);
  }
  const why =
    current === undefined
      ? 'it was released'
      : current[0] === owner
        ? `it ran out ${durationText(now - current[2])} ago without a renewal`
        : `it was taken over by ${current[1]}, whose lease has run out too`;
  return sqliteError(
    'conflict',
    `this run no longer holds the lease on run "${lineageId}" (${why}); ${what}; stop writing, and claim the head again to continue`,
    { details: { lineageId } },
  );
}

/**
 * Extends the lease by `ttlMs` from now, inside the caller's transaction. A lease that ran out but
 * nobody claimed since is still this owner's (a claim would have changed the owner, a release
 * removed the row), so renewing it is safe; a lease another owner took, or one released, is lost.
 */
export function renewLeaseIn(connection: Connection, token: LeaseToken, ttlMs: number): Lease {
  const { lineageId, owner } = token;
  connection.knownLease = undefined;
  const now = Date.now();
  const current = leaseOf(connection, lineageId);
  if (current === undefined || current[0] !== owner) {
    throw lost(lineageId, owner, current, now, 'the lease was not renewed');
  }
  const expiresAt = now + ttlMs;
  leaseStatements(connection).extend.run(expiresAt, lineageId, owner);
  return { lineageId, owner, holder: current[1], expiresAt: new Date(expiresAt).toISOString() };
}

/** Gives the lease up when `owner` holds it; does nothing otherwise. */
export function releaseLeaseIn(connection: Connection, token: LeaseToken): void {
  connection.knownLease = undefined;
  leaseStatements(connection).release.run(token.lineageId, token.owner);
}

/**
 * The fence of a write, inside its own transaction before anything is stored. The lease must be the
 * checkpoint's own lineage's, held by the token's owner, and unexpired (a write after the lease ran
 * out is refused even when nobody took it over: the holder renews first). Costs one primary-key
 * lookup, or none while `dataVersion` (read in this transaction) shows that no other connection has
 * committed since this connection last read the row: the row cannot have changed then, and a run's
 * writes follow each other with nothing in between.
 */
export function checkWriteLease(
  connection: Connection,
  lease: LeaseToken,
  lineageId: string,
  id: string,
  dataVersion: number,
): void {
  if (lease.lineageId !== lineageId) {
    throw sqliteError(
      'invalid_argument',
      `checkpoint "${id}" of run "${lineageId}" was written under the lease of run "${lease.lineageId}"; a lease fences its own run only`,
    );
  }
  const known = connection.knownLease;
  let current: LeaseRow | undefined;
  if (known !== undefined && known.dataVersion === dataVersion && known.lineageId === lineageId) {
    current = known.row;
  } else {
    current = leaseOf(connection, lineageId);
    connection.knownLease = { lineageId, row: current, dataVersion };
  }
  const now = Date.now();
  if (current !== undefined && current[0] === lease.owner && current[2] > now) return;
  throw lost(lineageId, lease.owner, current, now, `checkpoint "${id}" was not stored`);
}
