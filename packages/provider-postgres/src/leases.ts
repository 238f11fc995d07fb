import type { CrewlineError } from '@crewline/events';
import type { Lease, LeaseRequest, LeaseToken } from '@crewline/runtime-state';
import { type LeaseState, leaseHeldByOther, leaseLost, notTheHead } from '@crewline/runtime-state/internal';
import type pg from 'pg';
import { component } from './errors.js';
import { heldByNotRunningHere, holderPidNotRunningHere } from './holder-not-running.js';
import { forgetHeldLease, ownersHeldFor, rememberHeldLease } from './leases-of-this-process.js';
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
  const timeoutMs = Math.max(otherQueryTimeoutMs, Math.floor(ttlMs / 4));
  const { rows } = await client.query<ClaimRow>(
    timedQuery(handle.sql.claim, [lineageId, owner, holder, checkpointId, ttlMs], timeoutMs),
  );
  const row = rows[0]!;
  if (row.o_status !== 'granted') {
    // Not granted: a holder whose claim made again is refused has lost its lease (the runtime stops
    // its run and releases nothing), so it is no longer one this process is said to hold.
    forgetHeldLease(handle.location, lineageId, owner);
    if (row.o_status === 'held') throw await heldRefusal(client, handle, lineageId, row, timeoutMs);
    throw notTheHead(component, lineageId, checkpointId, row.o_head);
  }
  rememberHeldLease(handle.location, lineageId, owner, holder);
  return { lineageId, owner, holder, expiresAt: row.o_expires_at!.toISOString() };
}

/**
 * The refusal of a claim while `row`'s holder has an unexpired lease. Held by this very process (a
 * second kickoff of one state in one program, a resume of a checkpoint it still runs), it says so as
 * SQLite's does (`details.holderRunsHere`: a flow's kickoff then names the holder "(this process)");
 * held by a pid of this host name that is not running here, it says that.
 */
async function heldRefusal(
  client: pg.PoolClient,
  handle: SchemaHandle,
  lineageId: string,
  row: ClaimRow,
  timeoutMs: number,
): Promise<CrewlineError> {
  const held = row.o_holder ?? 'another process';
  const left = row.o_left_ms ?? 1;
  if (row.o_holder !== null && (await heldByThisProcess(client, handle, lineageId, row.o_holder, timeoutMs)))
    return leaseHeldByOther(component, lineageId, held, left, true);
  const refusal = leaseHeldByOther(component, lineageId, held, left);
  const pid = holderPidNotRunningHere(held);
  return pid === undefined ? refusal : heldByNotRunningHere(refusal, lineageId, held, left, pid);
}

/**
 * Whether the lease `holder` has on `lineageId` is one this process holds: one of its claims was
 * granted it for that holder, and the lease row's owner is still that claim's token. The holder's
 * text alone would not do (a container with the same host name may run the same pid), nor would the
 * grant alone: a lease of this process may have run out since and been claimed by such a one. Asked
 * only when this process was granted the lineage for that holder, so other refusals cost no query.
 */
async function heldByThisProcess(
  client: pg.PoolClient,
  handle: SchemaHandle,
  lineageId: string,
  holder: string,
  timeoutMs: number,
): Promise<boolean> {
  const owners = ownersHeldFor(handle.location, lineageId, holder);
  if (owners.length === 0) return false;
  const { rows } = await client.query<{ owner: string }>(
    timedQuery(`SELECT owner FROM ${handle.quoted}.leases WHERE lineage_id = $1`, [lineageId], timeoutMs),
  );
  const owner = rows[0]?.owner;
  // A lease row has one owner: the other tokens lost their lease (it ran out and was taken over).
  for (const lost of owners) if (lost !== owner) forgetHeldLease(handle.location, lineageId, lost);
  return owner !== undefined && owners.includes(owner);
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
  forgetHeldLease(handle.location, lineageId, owner);
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
  // Given up from now on, whether the row is removed or left to run out (a release that fails).
  forgetHeldLease(handle.location, token.lineageId, token.owner);
  await client.query(
    timedQuery(
      `DELETE FROM ${handle.quoted}.leases WHERE lineage_id = $1 AND owner = $2`,
      [token.lineageId, token.owner],
      otherQueryTimeoutMs,
    ),
  );
}
