import {
  type ProcessIdentity,
  processIsGone,
  processRunsHere,
  thisProcess,
} from '@crewline/runtime-state/internal';

/**
 * The `holder_process` column of a lease (schema version 7): the process that claimed it, as JSON
 * text `{ owner, host, pid, pidNamespace?, bootId? }`. A claim takes over at once from a holder
 * whose process is provably gone (`processIsGone`: same host, pid namespace and boot, and no process
 * has the pid), as JSON's lock files do; anywhere else it waits for the lease to run out.
 *
 * The text names the owner it was written for: a package of schema version 6 that writes into the
 * database anyway (one whose `user_version` was lost, so that it took it for its own version) claims
 * without this column and leaves the previous holder's text in place. That text is only believed
 * while its owner is the row's owner, so a live holder is never taken for the dead one before it.
 */
interface HolderProcess extends ProcessIdentity {
  owner: string;
}

/** The `holder_process` text of a lease `owner` claims from this process. */
export function holderProcessText(owner: string): string {
  const { host, pid, pidNamespace, bootId } = thisProcess();
  const recorded: HolderProcess = { owner, host, pid, pidNamespace, bootId };
  return JSON.stringify(recorded);
}

function parseHolderProcess(text: string): HolderProcess | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { owner, host, pid, pidNamespace, bootId } = parsed as Record<string, unknown>;
  if (typeof owner !== 'string' || typeof host !== 'string' || typeof pid !== 'number') return undefined;
  if (pidNamespace !== undefined && typeof pidNamespace !== 'string') return undefined;
  if (bootId !== undefined && typeof bootId !== 'string') return undefined;
  return { owner, host, pid, pidNamespace, bootId };
}

/** The process recorded for the lease `owner` holds: undefined without a believable record. */
function recordedHolder(owner: string, holderProcess: string | null): HolderProcess | undefined {
  if (holderProcess === null) return undefined;
  const recorded = parseHolderProcess(holderProcess);
  return recorded?.owner === owner ? recorded : undefined;
}

/**
 * Whether the lease `owner` holds was claimed by a process that is provably gone. False for a row
 * without the text (written before version 7), a text that does not parse or names another owner,
 * and a process that may be alive (this one, a live or reused pid, another host, namespace or boot).
 */
export function leaseHolderIsGone(owner: string, holderProcess: string | null): boolean {
  const recorded = recordedHolder(owner, holderProcess);
  return recorded !== undefined && processIsGone(recorded);
}

/** Whether the lease `owner` holds was claimed by a process running on this machine (this one included). */
export function leaseHolderRunsHere(owner: string, holderProcess: string | null): boolean {
  const recorded = recordedHolder(owner, holderProcess);
  return recorded !== undefined && processRunsHere(recorded);
}
