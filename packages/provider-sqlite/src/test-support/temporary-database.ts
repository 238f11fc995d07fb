import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A database path (without suffix: the provider adds `.db`) in a fresh temporary directory. */
export function temporaryDatabase(name = 'checkpoints'): string {
  return join(mkdtempSync(join(tmpdir(), 'crewline-sqlite-')), name);
}

/** Removes the temporary directory of a database made by {@link temporaryDatabase}. */
export function removeTemporaryDatabase(location: string): void {
  rmSync(join(location, '..'), { recursive: true, force: true });
}
