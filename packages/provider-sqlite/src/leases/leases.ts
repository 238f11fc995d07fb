import type { CrewlineError } from '@crewline/events';
import type { Lease, LeaseRequest, LeaseToken } from '@crewline/runtime-state';
import {
  foreignLease,
  type LeaseState,
  leaseHeldByOther,
  leaseLost,
  notTheHead,
} from '@crewline/runtime-state/internal';
import type { Connection } from '../database/connection.js';
import type { ClaimedLeaseRow, LeaseRow, LeaseStatements } from '../database/statements.js';
import { component, sqliteError } from '../errors.js';
import { holderProcessText, leaseHolderIsGone, leaseHolderRunsHere } from './holder-process.js';

function leaseStatements(connection: Connection): LeaseStatements {
  // Every method that reaches here opened the database for writing first.
  return connection.leases!;
}

/**
 * The refusal of a claim of a checkpoint in a database that does not exist yet (no file is created
 * for a claim that cannot succeed).
 */
export function noSuchHead(lineageId: string, checkpointId: string): CrewlineError {
  return notTheHead(component, lineageId, checkpointId, null);
}

/** The refusal of a renewal in a database that does not exist (nothing is created for it). */
export function noLeaseWithoutDatabase(location: string, lineageId: string): CrewlineError {
  return sqliteError(
    'conflict',
    `this run holds no lease on lineage "${lineageId}": database ${location} does not exist; stop writing`,
    { details: { lineageId } },
  );
}

function leaseOf(connection: Connection, lineageId: string): LeaseRow | undefined {
  return leaseStatements(connection).get.get(lineageId) as LeaseRow | undefined;
}

/**
 * Grants `request` when `checkpointId` is the lineage's newest checkpoint and no other owner holds an
 * unexpired lease (an expired one is taken over, and so is one whose holder's process is provably
 * gone, see holder-process.ts; the same owner claims again). Runs inside the caller's `BEGIN
 * IMMEDIATE` transaction: a dead process cannot come back and write meanwhile, and two claimers that
 * both found it dead take turns, the second finding the first's live lease. Someone else's lease is
 * reported before a moved head: it says who is continuing the run.
 */
export function claimLeaseIn(connection: Connection, request: LeaseRequest): Lease {
  const { lineageId, owner, checkpointId, holder, ttlMs } = request;
  connection.knownLease = undefined;
  const now = Date.now();
  const current = leaseStatements(connection).getForClaim.get(lineageId) as ClaimedLeaseRow | undefined;
  if (
    current !== undefined &&
    current[0] !== owner &&
    current[2] > now &&
    !leaseHolderIsGone(current[0], current[3])
  ) {
    const runsHere = leaseHolderRunsHere(current[0], current[3]);
    throw leaseHeldByOther(component, lineageId, current[1], current[2] - now, runsHere);
  }
  const head = connection.statements.latest.lineage.get(lineageId) as { id: string } | undefined;
  const headId = head?.id ?? null;
  if (headId !== checkpointId) throw notTheHead(component, lineageId, checkpointId, headId);
  const expiresAt = now + ttlMs;
  leaseStatements(connection).put.run(lineageId, owner, holder, expiresAt, holderProcessText(owner));
  return { lineageId, owner, holder, expiresAt: new Date(expiresAt).toISOString() };
}

/** Why `owner` does not hold the lease of `lineageId`, as the conflict its writes and renewals get. */
function lost(
  lineageId: string,
  owner: string,
  current: LeaseRow | undefined,
  now: number,
  what: string,
): CrewlineError {
  const state: LeaseState =
    current === undefined
      ? { held: false, mine: false, holder: null, expiresInMs: null }
      : { held: true, mine: current[0] === owner, holder: current[1], expiresInMs: current[2] - now };
  return leaseLost(component, lineageId, state, what);
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
  if (lease.lineageId !== lineageId) throw foreignLease(component, id, lineageId, lease.lineageId);
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
