import type { Lease, LeaseRequest, LeaseToken } from '@crewline/runtime-state';
import { type LeaseState, leaseHeldByOther, leaseLost, notTheHead } from '@crewline/runtime-state/internal';
import type pg from 'pg';
import { component } from './errors.js';
import { heldByNotRunningHere, holderPidNotRunningHere } from './holder-not-running.js';
import type { SchemaHandle } from './schema-handle.js';

interface ClaimRow {
  o_status: 'granted' | 'held' | 'moved';
  o_holder: string | null;
  o_expires_at: Date | null;
  o_left_ms: number | null;
  o_head: string | null;
}

/**
 * How long a renewal may wait for the server: a quarter of the lease, under the holder's renewal
 * interval (a third), so a connection that hangs (a partition, a server that stopped answering, a row
 * lock held by a stuck transaction) fails the renewal and is closed rather than reused by the next
 * one. At least a second: a busy server must not turn a short lease's renewals into errors (the
 * runtime counts its lease down itself and gives up on a renewal after a quarter of the lease anyway).
 */
export function renewalTimeoutMs(ttlMs: number): number {
  return Math.max(1_000, Math.floor(ttlMs / 4));
}

/**
 * The same for a claim (at least 5 s: it may wait behind the writes that hold the lease row), a
 * release or a look at a lease, which know no lease time (a lease runs out on its own anyway).
 */
const otherQueryTimeoutMs = 5_000;

/**
 * A query given up after `timeoutMs` without its answer (node-postgres' per-query `query_timeout`),
 * however much the server answers otherwise: a lease query must answer within its limit. A server
 * that goes silent before (`queryTimeoutMs` and a check on a new connection, see
 * `SocketClosingClient`) gives it up sooner.
 */
function timedQuery(text: string, values: unknown[], timeoutMs: number): pg.QueryConfig {
  const query: pg.QueryConfig & { query_timeout: number } = { text, values, query_timeout: timeoutMs };
  return query;
}

/** Grants a claim or throws `conflict` (someone else's unexpired lease first, then a moved head). */
export async function claimLease(
  client: pg.PoolClient,
  handle: SchemaHandle,
  request: LeaseRequest,
): Promise<Lease> {
  const { lineageId, owner, holder, checkpointId, ttlMs } = request;
  const { rows } = await client.query<ClaimRow>(
    timedQuery(
      handle.sql.claim,
      [lineageId, owner, holder, checkpointId, ttlMs],
      Math.max(otherQueryTimeoutMs, Math.floor(ttlMs / 4)),
    ),
  );
  const row = rows[0]!;
  if (row.o_status === 'held') {
    const held = row.o_holder ?? 'another process';
    const left = row.o_left_ms ?? 1;
    const refusal = leaseHeldByOther(component, lineageId, held, left);
    const pid = holderPidNotRunningHere(held);
    throw pid === undefined ? refusal : heldByNotRunningHere(refusal, lineageId, held, left, pid);
  }
  if (row.o_status === 'moved') throw notTheHead(component, lineageId, checkpointId, row.o_head);
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
  const timeoutMs = renewalTimeoutMs(ttlMs);
  const renewed = await client.query<{ holder: string; expires_at: Date }>(
    timedQuery(
      `UPDATE ${handle.quoted}.leases SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
        WHERE lineage_id = $1 AND owner = $2 RETURNING holder, expires_at`,
      [lineageId, owner, ttlMs],
      timeoutMs,
    ),
  );
  const row = renewed.rows[0];
  if (row !== undefined)
    return { lineageId, owner, holder: row.holder, expiresAt: row.expires_at.toISOString() };
  throw leaseLost(
    component,
    lineageId,
    await leaseState(client, handle, token, timeoutMs),
    'the lease was not renewed',
  );
}

/** The lease row of a run as `token`'s owner sees it. */
export async function leaseState(
  client: pg.PoolClient,
  handle: SchemaHandle,
  token: LeaseToken,
  timeoutMs = otherQueryTimeoutMs,
): Promise<LeaseState> {
  const { rows } = await client.query<{ mine: boolean; holder: string; left_ms: number }>(
    timedQuery(
      `SELECT owner = $2 AS mine, holder, extract(epoch FROM (expires_at - clock_timestamp())) * 1000 AS left_ms
         FROM ${handle.quoted}.leases WHERE lineage_id = $1`,
      [token.lineageId, token.owner],
      timeoutMs,
    ),
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
  await client.query(
    timedQuery(
      `DELETE FROM ${handle.quoted}.leases WHERE lineage_id = $1 AND owner = $2`,
      [token.lineageId, token.owner],
      otherQueryTimeoutMs,
    ),
  );
}
