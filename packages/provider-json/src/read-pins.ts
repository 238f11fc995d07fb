import { closeSync, type Dirent, lstatSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describeError, errorCode, jsonError } from './errors.js';
import { withLockMutexAsync } from './lock-mutex.js';
import { writerIsGone, writerNameDigits, writtenInThisPidSpace } from './temp-writer.js';
import { parseWholeFileTempName, unlinkIfPresent } from './whole-file.js';

// A fork reads its parent checkpoint when it starts, and writes its first file, which names that
// parent, only at its first checkpoint (by default when its first task ends, after a model call).
// In between, nothing in the location said the parent was wanted: a prune of the run it came from
// (`maxCheckpoints`, after each of that run's writes) found no file naming it and removed it, and
// the fork's first checkpoint named a parent that no longer existed (SPEC §3 "Fork": the tree must
// be recoverable from storage alone). Looking at the directories again right before removing (see
// JsonProvider.prune) narrows that window to nothing only for forks that wrote already.
//
// So a read leaves a pin: `<location>/.pins/<id>.<pid>.<8 hex>.pin`, an empty file whose name says
// which checkpoint was read and by which process (the pid, and the hex digits of every temp file
// this package names: a tag of the host, pid namespace and boot, then a counter; temp-writer.ts).
// A prune keeps a checkpoint pinned by a process that may be running. The provider cannot tell a
// fork's read from any other (the command line's `info`, the TUI, a resume), and the runtime's claim
// of the fork's new lineage does not name the parent, so every `read` pins: a checkpoint read by a
// live process is kept a little longer, never lost.
//
// Both sides take one mutex per location (`.pins/prune.takeover`, the lineage locks' kind; see
// lock-mutex.ts): a read checks its file is still there and pins it under the mutex, a prune holds
// it from its look at the pins to its last removal. So either the pin is there when the prune looks,
// or the file was gone when the read checked (the read is `not_found`, as if it came later).
//
// A pin goes:
// - when this process writes a checkpoint naming the pinned one as parent, as often as it read it
//   (a fork reads its parent once and names it once; a process that read it more often, a TUI,
//   keeps it until it exits): the file it wrote keeps the parent from then on, as any fork point.
//   A prune looks at the pins before it looks at the files again (see JsonProvider.prune), so a pin
//   that is gone when it looks was removed after the fork's file was in place.
// - when the process exits (an `exit` listener).
// - when its process is gone: killed (a signal ends a process without `exit` listeners) or crashed.
//   A pin named in this pid space whose pid is dead is ignored by every prune, and removed by it and
//   by the first use of the location in a process (temp-sweep.ts). One named in another pid space (a
//   container sharing the volume) or where the system does not tell the pid space (macOS, Windows)
//   cannot be proven gone: it counts for a day, as an empty spare temp file does.
//
// The pins are this process's, whichever JsonProvider read or wrote (the runtime may read a fork's
// parent through its registry's provider and write through the one the run's config gives).

const pinDirectory = '.pins';
const pinSuffix = '.pin';
/** A pin whose process cannot be checked from here counts this long after it was made. */
export const UNCHECKABLE_PIN_AGE_MS = 24 * 60 * 60 * 1000;
/**
 * How long a read or a prune waits for the mutex. Held by a read for a `lstat` and a file creation,
 * by a prune for its last look and its removals (a prune of a whole location of thousands of files
 * may hold it for a second or so).
 */
const pinMutexWaitMs = 10_000;
const pinNamePattern = /^(.+)\.(\d{1,10})\.([0-9a-f]{8})\.pin$/;

/** This process's pins: per location, per checkpoint id, the pin file and the reads not yet followed by a write. */
const held = new Map<string, Map<string, { path: string; reads: number }>>();
let exitListenerAdded = false;

function mutexPath(root: string): string {
  return join(root, pinDirectory, 'prune');
}

/** Creates `.pins`; false where it cannot be (a read-only location, a standalone checkpoint file). */
function ensurePinDirectory(root: string, directoryMode: number): boolean {
  try {
    mkdirSync(join(root, pinDirectory), { recursive: true, mode: directoryMode });
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOTDIR') return false;
    throw jsonError('read_failed', `could not create ${join(root, pinDirectory)}: ${describeError(error)}`, {
      cause: error,
    });
  }
}

function busyError(root: string, code: 'read_failed' | 'write_failed', what: string) {
  return jsonError(
    code,
    `${what} waited ${pinMutexWaitMs} ms for another process pruning ${root} (its mutex ${mutexPath(root)}.takeover); try again`,
    { details: { location: root } },
  );
}

/**
 * Pins checkpoint `id` of `root`, found at `path`, for this process before it is read (see the
 * module comment). False when the file is no longer there: a prune removed it since it was found.
 * A location where no pin can be made (read-only: nothing there is pruned by this user either) is
 * read without one.
 */
export async function pinForRead(
  root: string,
  id: string,
  path: string,
  modes: { fileMode: number; directoryMode: number },
): Promise<boolean> {
  const mine = held.get(root)?.get(id);
  if (mine !== undefined) {
    // Pinned already: no prune removed it since.
    mine.reads += 1;
    return true;
  }
  if (!ensurePinDirectory(root, modes.directoryMode)) return true;
  const outcome = await withLockMutexAsync(
    mutexPath(root),
    async () => {
      try {
        lstatSync(path);
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return false;
        throw error;
      }
      // Another read of this process may have pinned it while this one waited for the mutex.
      const pinned = held.get(root)?.get(id);
      if (pinned !== undefined) pinned.reads += 1;
      else remember(root, id, createPin(root, id, modes.fileMode));
      return true;
    },
    pinMutexWaitMs,
  );
  if (!outcome.entered) throw busyError(root, 'read_failed', `reading checkpoint ${id}`);
  return outcome.value;
}

/** Creates this process's pin of `id`; a name a killed predecessor with this pid left is skipped. */
function createPin(root: string, id: string, fileMode: number): string {
  for (let attempt = 1; ; attempt += 1) {
    const path = join(root, pinDirectory, `${id}.${process.pid}.${writerNameDigits()}${pinSuffix}`);
    try {
      closeSync(openSync(path, 'wx', fileMode));
      return path;
    } catch (error) {
      if (errorCode(error) !== 'EEXIST' || attempt === 8)
        throw jsonError('read_failed', `could not create the pin ${path}: ${describeError(error)}`, {
          cause: error,
        });
    }
  }
}

function remember(root: string, id: string, path: string): void {
  let pins = held.get(root);
  if (pins === undefined) {
    pins = new Map();
    held.set(root, pins);
  }
  pins.set(id, { path, reads: 1 });
  if (!exitListenerAdded) {
    exitListenerAdded = true;
    process.once('exit', removePinsAtExit);
  }
}

/**
 * This process stored a checkpoint naming `parentId` as parent in `root`: one read of it is
 * followed by its write, and its pin goes with the last such read. Best-effort: a pin that cannot
 * be removed keeps the checkpoint until the process exits.
 */
export function releasePinAfterWrite(root: string, parentId: string | null): void {
  if (parentId === null) return;
  const pins = held.get(root);
  const pin = pins?.get(parentId);
  if (pin === undefined) return;
  pin.reads -= 1;
  if (pin.reads > 0) return;
  pins!.delete(parentId);
  if (pins!.size === 0) held.delete(root);
  try {
    unlinkIfPresent(pin.path);
  } catch {
    // Kept until the process exits or is gone: the checkpoint is kept longer, no more.
  }
}

function removePinsAtExit(): void {
  for (const pins of held.values())
    for (const { path } of pins.values()) {
      try {
        unlinkIfPresent(path);
      } catch {
        // Gone with its location, or not removable: a prune ignores it once this process is gone.
      }
    }
  held.clear();
}

/**
 * Runs a prune's removal (`action`, given the ids of `removing` pinned by a process that may be
 * running) under the location's pin mutex (see the module comment). Pins of processes provably gone
 * met on the way are removed. `write_failed` when another process held the mutex too long.
 */
export async function withPinsHeld<T>(
  root: string,
  removing: readonly string[],
  directoryMode: number,
  action: (pinned: ReadonlySet<string>) => Promise<T>,
): Promise<T> {
  try {
    mkdirSync(join(root, pinDirectory), { recursive: true, mode: directoryMode });
  } catch (error) {
    throw jsonError(
      'write_failed',
      `could not create ${join(root, pinDirectory)}, which a prune needs to see which checkpoints are being read: ${describeError(error)}`,
      { cause: error },
    );
  }
  const outcome = await withLockMutexAsync(
    mutexPath(root),
    () => action(livePins(root, new Set(removing))),
    pinMutexWaitMs,
  );
  if (!outcome.entered) throw busyError(root, 'write_failed', 'pruning');
  return outcome.value;
}

/** Of `wanted`, the ids pinned by a process that may be running; pins of gone ones are removed. */
function livePins(root: string, wanted: ReadonlySet<string>): Set<string> {
  const pinned = new Set<string>();
  const now = Date.now();
  for (const entry of pinEntries(root)) {
    const pin = pinNamePattern.exec(entry.name);
    if (pin === null || !wanted.has(pin[1]!) || pinned.has(pin[1]!)) continue;
    const path = join(root, pinDirectory, entry.name);
    const state = pinState(path, Number(pin[2]), pin[3]!, now);
    if (state === 'holds') pinned.add(pin[1]!);
    else if (state === 'gone') removeQuietly(path);
  }
  return pinned;
}

function pinEntries(root: string): Dirent[] {
  try {
    return readdirSync(join(root, pinDirectory), { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return [];
    throw error;
  }
}

/** Whether a pin counts: its process may be running (see the module comment). */
function pinState(path: string, pid: number, digits: string, now: number): 'holds' | 'gone' | 'missing' {
  let modifiedAtMs: number;
  try {
    modifiedAtMs = statSync(path).mtimeMs;
  } catch {
    return 'missing';
  }
  if (writerIsGone(pid, digits, modifiedAtMs)) return 'gone';
  if (writtenInThisPidSpace(digits)) return 'holds';
  return now - modifiedAtMs < UNCHECKABLE_PIN_AGE_MS ? 'holds' : 'gone';
}

function removeQuietly(path: string): void {
  try {
    unlinkIfPresent(path);
  } catch {
    // Not removable now: ignored all the same, and tried again by the next prune.
  }
}

/**
 * Removes the pins of processes that are gone (see {@link pinState}) and the temp files of the pin
 * mutex a process was killed while writing (whole-file.ts; its writer provably gone): what the first
 * use of a location in a process cleans. Returns how many files went. Throws only when `.pins`
 * cannot be listed.
 */
export function removePinsOfGoneProcesses(root: string): number {
  let removed = 0;
  const now = Date.now();
  for (const entry of pinEntries(root)) {
    if (!entry.isFile()) continue;
    const path = join(root, pinDirectory, entry.name);
    const pin = pinNamePattern.exec(entry.name);
    const temp = pin === null ? parseWholeFileTempName(entry.name) : undefined;
    try {
      if (pin !== null) {
        if (pinState(path, Number(pin[2]), pin[3]!, now) !== 'gone') continue;
      } else if (temp === undefined || !writerIsGone(temp.pid, temp.digits, statSync(path).mtimeMs)) continue;
      unlinkIfPresent(path);
      removed += 1;
    } catch {
      // Changed or removed meanwhile, or not removable: left for a later sweep.
    }
  }
  return removed;
}
