// Where the fuzz cases keep their files: a memory file system when the machine has one. Thousands
// of cases each create, fsync and remove a small tree of files; on a disk shared with other work
// that costs tens of milliseconds a case and measures the disk, not the readers under test.
import { accessSync, constants, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const memoryFileSystem = '/dev/shm';

function usable(directory: string): boolean {
  try {
    accessSync(directory, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A new empty directory named `<prefix>XXXXXX`, in /dev/shm when writable, else the system's temp directory. */
export function scratchDirectory(prefix: string): string {
  return mkdtempSync(join(usable(memoryFileSystem) ? memoryFileSystem : tmpdir(), prefix));
}
