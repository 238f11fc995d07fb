import type { Lease, LeaseRequest, LeaseToken } from '@crewline/runtime-state';
import { checkLeaseDuration, checkLeaseRequest, checkLeaseToken } from '@crewline/runtime-state/internal';
import { retryWhenBusy } from '../database/busy-retry.js';
import type { Connection } from '../database/connection.js';
import type { ConnectionPool } from '../database/connection-pool.js';
import { component, toCrewlineError } from '../errors.js';
import { claimLeaseIn, noLeaseWithoutDatabase, noSuchHead, releaseLeaseIn, renewLeaseIn } from './leases.js';

// The lease methods of `SqliteProvider` (claim, renew, release): each checks its arguments, picks the
// database's connection from the provider's pool and runs in a `BEGIN IMMEDIATE` transaction of its
// own (leases.ts holds what happens inside it).

/** Runs `work` in a `BEGIN IMMEDIATE` transaction, retried while the database is busy. */
function leaseTransaction<T>(connection: Connection, busyRetryMs: number, work: () => T): Promise<T> {
  return retryWhenBusy(
    () => connection.db.transaction(work).immediate(),
    busyRetryMs,
    'write',
    connection.location,
  );
}

/** `SqliteProvider.claimLease`: see there. */
export async function claimLeaseAt(
  connections: ConnectionPool,
  busyRetryMs: number,
  location: string,
  request: LeaseRequest,
): Promise<Lease> {
  checkLeaseRequest(component, request);
  try {
    if (request.checkpointId !== null && connections.readable(location) === undefined) {
      throw noSuchHead(request.lineageId, request.checkpointId);
    }
    const connection = connections.writable(location);
    return await leaseTransaction(connection, busyRetryMs, () => claimLeaseIn(connection, request));
  } catch (error) {
    throw toCrewlineError(error, 'write', location);
  }
}

/** `SqliteProvider.renewLease`: see there. */
export async function renewLeaseAt(
  connections: ConnectionPool,
  busyRetryMs: number,
  location: string,
  token: LeaseToken,
  ttlMs: number,
): Promise<Lease> {
  checkLeaseToken(component, token);
  checkLeaseDuration(component, ttlMs);
  try {
    const connection = connections.existingWritable(location);
    if (connection === undefined) throw noLeaseWithoutDatabase(location, token.lineageId);
    return await leaseTransaction(connection, busyRetryMs, () => renewLeaseIn(connection, token, ttlMs));
  } catch (error) {
    throw toCrewlineError(error, 'write', location);
  }
}

/** `SqliteProvider.releaseLease`: see there. */
export async function releaseLeaseAt(
  connections: ConnectionPool,
  busyRetryMs: number,
  location: string,
  token: LeaseToken,
): Promise<void> {
  checkLeaseToken(component, token);
  try {
    const connection = connections.existingWritable(location);
    if (connection === undefined) return;
    await leaseTransaction(connection, busyRetryMs, () => releaseLeaseIn(connection, token));
  } catch (error) {
    throw toCrewlineError(error, 'write', location);
  }
}
