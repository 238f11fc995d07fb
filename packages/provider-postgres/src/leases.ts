import type { Lease, LeaseRequest, LeaseToken } from '@crewline/runtime-state';
import { type LeaseState, leaseHeldByOther, leaseLost, notTheHead } from '@crewline/runtime-state/internal';
import type pg from 'pg';
import { component } from './errors.js';
import type { SchemaHandle } from './schema-handle.js';

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
    throw leaseHeldByOther(component, lineageId, row.o_holder ?? 'another process', row.o_left_ms ?? 1);
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
  const renewed = await client.query<{ holder: string; expires_at: Date }>(
    `UPDATE ${handle.quoted}.leases SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
      WHERE lineage_id = $1 AND owner = $2 RETURNING holder, expires_at`,
    [lineageId, owner, ttlMs],
  );
  const row = renewed.rows[0];
  if (row !== undefined)
    return { lineageId, owner, holder: row.holder, expiresAt: row.expires_at.toISOString() };
  throw leaseLost(component, lineageId, await leaseState(client, handle, token), 'the lease was not renewed');
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
