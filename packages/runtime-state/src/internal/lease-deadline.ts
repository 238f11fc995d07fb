// The rule a lease holder counts its lease down by, on its own monotonic clock, shared by the
// runtime's lineage lease and the worker's hold on a queued run: both must stop before the store
// could grant what they hold to someone else, and both must survive one failed renewal.

/**
 * What a holder takes off its lease when it counts it down itself: the store started counting when
 * it received the claim or renewal (after it was sent), but its clock may run a little faster than
 * the holder's, and a timer of the holder's may fire late. A fifth of the lease: with renewals every
 * third, one failed renewal is survived, two in a row stop the holder.
 */
export function leaseSafetyMarginMs(ttlMs: number): number {
  return Math.floor(ttlMs / 5);
}

/**
 * The `performance.now()` past which the store may have granted the lease to someone else, given
 * `sentAt`, the `performance.now()` at which the claim or renewal the store confirmed was sent: the
 * store holds the lease until `ttlMs` after it at the earliest, less the safety margin.
 */
export function localLeaseDeadline(sentAt: number, ttlMs: number): number {
  return sentAt + ttlMs - leaseSafetyMarginMs(ttlMs);
}
