import type { CrewlineError } from '@crewline/events';
import type { Lease, LeaseRequest, LeaseToken } from '@crewline/runtime-state';
import type pg from 'pg';
import { postgresError } from './errors.js';
import type { SchemaHandle } from './schema-handle.js';

/** "850 ms", "12.3 s", "4 min 5 s": how long a lease has left, for people. */
export function durationText(ms: number): string {
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
  const left = Math.max(1, Math.round(expiresInMs));
  return postgresError(
    'conflict',
    `run "${lineageId}" is being continued by ${holder}, whose lease has ${durationText(left)} left; ${consequence}`,
    { details: { lineageId, holder, expiresInMs: left } },
  );
}

function notTheHead(lineageId: string, checkpointId: string | null, headId: string | null): CrewlineError {
  const message =
    checkpointId === null
      ? `run "${lineageId}" already has checkpoints (its head is "${headId}"); claim its head to continue it, or start a new run`
      : headId === null
        ? `checkpoint "${checkpointId}" is not the head of run "${lineageId}", which has no checkpoint; fork from it instead (onConflict: 'fork')`
        : `checkpoint "${checkpointId}" is no longer the head of run "${lineageId}" (someone continued it: its head is "${headId}"); fork from it instead (onConflict: 'fork'), or continue the head`;
  return postgresError('conflict', message, { details: { lineageId, headId } });
}

/** The lease row as a refused write or renewal sees it. */
export interface LeaseState {
  /** Someone (this owner or another) has a row. */
  held: boolean;
  /** The row is this owner's. */
  mine: boolean;
  holder: string | null;
  /** Milliseconds left (negative: ran out that long ago). */
  expiresInMs: number | null;
}

/** Why `owner` no longer holds the lease of `lineageId`: the `conflict` its writes and renewals get. */
export function leaseLost(lineageId: string, state: LeaseState, what: string): CrewlineError {
  const left = state.expiresInMs ?? 0;
  if (state.held && !state.mine && left > 0 && state.holder !== null) {
    return heldByOther(lineageId, state.holder, left, `${what}; this run must stop writing`);
  }
  const why = !state.held
    ? 'it was never granted, or was released'
    : state.mine
      ? `it ran out ${durationText(-left)} ago without a renewal`
      : `it was taken over by ${state.holder}, whose lease has run out too`;
  return postgresError(
    'conflict',
    `this run does not hold the lease on run "${lineageId}" (${why}); ${what}; stop writing, and claim the head again to continue`,
    { details: { lineageId } },
  );
}

interface ClaimRow {
  o_status: 'granted' | 'held' | 'moved';
  o_holder: string | null;
  o_expires_at: Date | null;
  o_left_ms: number | null;
  o_head: string | null;
}

/** Grants a claim or throws `conflict` (someone else's unexpired lease first, then a moved head). */
export async function claimLease(
  client: pg.PoolClient,
  handle: SchemaHandle,
  request: LeaseRequest,
): Promise<Lease> {
  const { lineageId, owner, holder, checkpointId, ttlMs } = request;
  const { rows } = await client.query<ClaimRow>(handle.sql.claim, [
    lineageId,
    owner,
    holder,
    checkpointId,
    ttlMs,
  ]);
  const row = rows[0]!;
  if (row.o_status === 'held') {
    throw heldByOther(
      lineageId,
      row.o_holder ?? 'another process',
      row.o_left_ms ?? 1,
      "wait for it to end (a holder that died stops renewing and its lease runs out), or fork instead (onConflict: 'fork')",
    );
  }
  if (row.o_status === 'moved') throw notTheHead(lineageId, checkpointId, row.o_head);
  return { lineageId, owner, holder, expiresAt: row.o_expires_at!.toISOString() };
}

/**
 * Extends the lease by `ttlMs` from now. A lease that ran out but nobody claimed since is still this
 * owner's (a claim would have changed the owner, a release removed the row), so renewing it is safe.
 */
export async function renewLease(
  client: pg.PoolClient,
  handle: SchemaHandle,
  token: LeaseToken,
  ttlMs: number,
): Promise<Lease> {
  const { lineageId, owner } = token;
  const renewed = await client.query<{ holder: string; expires_at: Date }>(
    `UPDATE ${handle.quoted}.leases SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
      WHERE lineage_id = $1 AND owner = $2 RETURNING holder, expires_at`,
    [lineageId, owner, ttlMs],
  );
  const row = renewed.rows[0];
  if (row !== undefined)
    return { lineageId, owner, holder: row.holder, expiresAt: row.expires_at.toISOString() };
  throw leaseLost(lineageId, await leaseState(client, handle, token), 'the lease was not renewed');
}

/** The lease row of a run as `token`'s owner sees it. */
export async function leaseState(
  client: pg.PoolClient,
  handle: SchemaHandle,
  token: LeaseToken,
): Promise<LeaseState> {
  const { rows } = await client.query<{ mine: boolean; holder: string; left_ms: number }>(
    `SELECT owner = $2 AS mine, holder, extract(epoch FROM (expires_at - clock_timestamp())) * 1000 AS left_ms
       FROM ${handle.quoted}.leases WHERE lineage_id = $1`,
    [token.lineageId, token.owner],
  );
  const row = rows[0];
  return row === undefined
    ? { held: false, mine: false, holder: null, expiresInMs: null }
    : { held: true, mine: row.mine, holder: row.holder, expiresInMs: Number(row.left_ms) };
}

/** Gives the lease up when `owner` holds it; does nothing otherwise. */
export async function releaseLease(
  client: pg.PoolClient,
  handle: SchemaHandle,
  token: LeaseToken,
): Promise<void> {
  await client.query(`DELETE FROM ${handle.quoted}.leases WHERE lineage_id = $1 AND owner = $2`, [
    token.lineageId,
    token.owner,
  ]);
}
