import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

// Who holds a lease, as far as this machine can tell whether it is still alive: the providers that
// fence on one machine (JSON's lock files, SQLite's leases table) record it with every claim, and
// take over at once from a holder whose process is provably gone instead of waiting for its lease
// to run out.

/**
 * A process as a lease records it: its pid and what makes the pid mean something (the host name,
 * the pid namespace and the boot of the machine, where the system tells them).
 */
export interface ProcessIdentity {
  host: string;
  pid: number;
  /** The pid namespace of the process (`/proc/self/ns/pid`), where the system has one. */
  pidNamespace?: string | undefined;
  /** The boot of the machine (`/proc/sys/kernel/random/boot_id`), where the system tells it. */
  bootId?: string | undefined;
}

let namespaceAndBoot: { pidNamespace: string | undefined; bootId: string | undefined } | undefined;

/**
 * This process's identity. Containers that share a host name (and a volume) have pid spaces of their
 * own, and a reboot starts pids again: a pid that is not alive here may be a live process there.
 */
export function thisProcess(): ProcessIdentity {
  namespaceAndBoot ??= {
    pidNamespace: readOrUndefined(() => readlinkSync('/proc/self/ns/pid')),
    bootId: readOrUndefined(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()),
  };
  return { host: hostname(), pid: process.pid, ...namespaceAndBoot };
}

function readOrUndefined(read: () => string): string | undefined {
  try {
    return read() || undefined;
  } catch {
    // Not Linux, or /proc not mounted: the host name is all there is to go by.
    return undefined;
  }
}

/**
 * False only when the system says no process has `pid` (ESRCH). Any other refusal of the probe is
 * no proof: EPERM (another user's process), and EACCES from SELinux or AppArmor, which refuse the
 * probe between differently confined processes that may well be running.
 */
function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  return !isZombie(pid);
}

/**
 * Whether `pid` is a zombie: killed or exited, its exit status not yet collected by its parent
 * (`kill(pid, 0)` still succeeds). It runs no more code and writes nothing: its lease is as dead as
 * the process. Read from `/proc/<pid>/stat` (its state, and its thread count: a thread group whose
 * leader exited while other threads run is a zombie leader, not a dead process); where it cannot be
 * read, the process counts as not a zombie (waited out).
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields from the state on (the command name may hold spaces and parentheses): state, then
    // num_threads 17 further. A leader whose other threads still run shows Z too, with them counted.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' && Number(fields[17]) <= 1;
  } catch {
    return false;
  }
}

/**
 * Whether `holder`'s pid means a pid of this machine's pid space: same host, pid namespace and boot,
 * both known. Without /proc (macOS, Windows, a jail), two machines with the same host name sharing a
 * volume would look alike: nothing there proves a pid is this machine's.
 */
function inThisPidSpace(holder: ProcessIdentity): boolean {
  const here = thisProcess();
  return (
    here.pidNamespace !== undefined &&
    here.bootId !== undefined &&
    holder.host === here.host &&
    holder.pidNamespace === here.pidNamespace &&
    holder.bootId === here.bootId &&
    Number.isInteger(holder.pid) &&
    holder.pid > 0
  );
}

/**
 * True only when `holder` is provably gone: recorded on this host, in this pid namespace and this
 * boot (a record without them, from elsewhere, from an older version or from a system that does not
 * tell them, proves nothing), not this
 * process, and no process has its pid. A pid reused by another process since reads as alive: the
 * lease is then waited out, never taken from a holder that might be running.
 */
export function processIsGone(holder: ProcessIdentity): boolean {
  return inThisPidSpace(holder) && holder.pid !== process.pid && !processIsAlive(holder.pid);
}

/**
 * True when `holder`'s pid is a live process of this machine's pid space (this one included): what a
 * refused claim can tell its user, as waiting for a lease to run out will not help while it runs.
 * (A pid reused since reads as running too; its lease then runs out as it is no longer renewed.)
 */
export function processRunsHere(holder: ProcessIdentity): boolean {
  return inThisPidSpace(holder) && (holder.pid === process.pid || processIsAlive(holder.pid));
}
