import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CorruptionMode } from '@crewline/provider-testkit';

/** Finds the file of checkpoint `id` under a location (any branch). */
export function checkpointFile(location: string, id: string): string {
  const found = readdirSync(location, { recursive: true, encoding: 'utf8' }).find(
    (path) => path.split(/[\\/]/).at(-1)!.startsWith(`${id}_p-`) && path.endsWith('.json'),
  );
  if (!found) throw new Error(`test setup: no file for checkpoint ${id} under ${location}`);
  return join(location, found);
}

/** Damages a stored checkpoint file in place, as the testkit's `corrupt` hook asks. */
export function corruptCheckpointFile(location: string, id: string, mode: CorruptionMode): void {
  const path = checkpointFile(location, id);
  const text = readFileSync(path, 'utf8');
  let damaged: string | Buffer;
  switch (mode) {
    case 'truncate':
      damaged = text.slice(0, Math.floor(text.length / 2));
      break;
    case 'garbage':
      damaged = Buffer.from([
        0x00, 0xff, 0xfe, 0x7b, 0x22, 0x9c, 0x0a, 0x6e, 0x6f, 0x74, 0x20, 0x6a, 0x73, 0x6f, 0x6e,
      ]);
      break;
    case 'newer-version':
      damaged = text.replace('"formatVersion": 1,', '"formatVersion": 999,');
      break;
    case 'proto':
      damaged = text.replace('"metadata": {', '"metadata": {"__proto__": {"polluted": "yes"}, ');
      break;
  }
  if (damaged === text) throw new Error(`test setup: ${mode} did not change ${path}`);
  writeFileSync(path, damaged);
}
