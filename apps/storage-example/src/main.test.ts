import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

const main = fileURLToPath(new URL('./main.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

it('`start` runs both providers and prints what it wrote, listed and restored', () => {
  const directory = mkdtempSync(join(tmpdir(), 'storage-example-start-'));
  try {
    const result = spawnSync(
      process.execPath,
      ['--conditions=@crewline/source', '--import', tsx, main, directory],
      { encoding: 'utf8' },
    );
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain(`json: ${join(directory, 'checkpoints')}`);
    expect(result.stdout).toContain(`sqlite: ${join(directory, 'checkpoints.db')}`);
    expect(result.stdout.match(/items: 1 bread, 6 apples$/gm)).toHaveLength(2);
    expect(result.stdout.match(/ what-if +parent /g)).toHaveLength(2);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});
