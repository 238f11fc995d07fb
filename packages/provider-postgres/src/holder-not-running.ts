import { hostname } from 'node:os';
import type { CrewlineError } from '@crewline/events';
import { leaseHeldAdvice, leaseHeldMessage } from '@crewline/runtime-state/internal';
import { postgresError } from './errors.js';

/** A holder as the runtime names it: `<what> on <host>, pid <pid>`. */
const holderPattern = / on ([^\s,]+), pid (\d+)$/;

/**
 * The pid of `holder` when it names this machine's host name and no process has that pid here
 * (ESRCH); undefined for any other holder, this process, or a pid the system will not probe (EPERM:
 * another user's process, which runs). Postgres records the holder as text only, without the pid
 * namespace and boot that SQLite's leases keep: a host name is no proof that the pid is this
 * machine's, as containers that share one have pid spaces of their own.
 */
export function holderPidNotRunningHere(holder: string): number | undefined {
  const match = holderPattern.exec(holder);
  if (match === null || match[1] !== hostname()) return undefined;
  const pid = Number(match[2]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH' ? pid : undefined;
  }
}

/**
 * `refusal` (the lease is held by someone else) told about a holder whose pid is not running on this
 * machine: what it would say of a holder that may be alive ("wait for it to end") does not help, and
 * the lease is still not taken over before it runs out, since the pid may run in a container with the
 * same host name. `details.holderNotRunningHere` and `details.holderPid` say it to a caller that words
 * the refusal itself (the CLI, a flow's kickoff), so that none of them reads the pid out of the holder.
 */
export function heldByNotRunningHere(
  refusal: CrewlineError,
  lineageId: string,
  holder: string,
  expiresInMs: number,
  pid: number,
): CrewlineError {
  const advice = leaseHeldAdvice(undefined, false, '', pid);
  return postgresError('conflict', leaseHeldMessage(lineageId, holder, expiresInMs, advice), {
    details: { ...refusal.details, holderNotRunningHere: true, holderPid: pid },
  });
}
