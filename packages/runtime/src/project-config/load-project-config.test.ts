import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadProjectConfig } from './load-project-config.js';

const directories: string[] = [];

function projectWith(config: string, name = 'crewline.config.mjs'): string {
  // Outside the workspace, so no crewline package resolves from it: a user's fresh directory.
  const directory = mkdtempSync(join(tmpdir(), 'crewline-config-'));
  directories.push(directory);
  writeFileSync(join(directory, name), config);
  return directory;
}

afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('loadProjectConfig errors', () => {
  it('names the package a config imports that is not installed, and says to install it there', async () => {
    const cwd = projectWith(
      "import { defineConfig } from '@crewline/runtime';\nexport default defineConfig({});\n",
    );
    const error = await loadProjectConfig({ cwd, register: false }).catch((thrown: unknown) => thrown);
    expect((error as Error).message).toContain(
      `imports @crewline/runtime, which is not installed where the config lives (${cwd})`,
    );
    expect((error as Error).message).toContain(
      'install @crewline/runtime (and @crewline/worker, for runs) there',
    );
    expect((error as Error).message).not.toContain('TypeScript loader');
  });

  it('says which file a relative import of the config misses', async () => {
    const cwd = projectWith("export { default } from './crews.mjs';\n");
    const error = await loadProjectConfig({ cwd, register: false }).catch((thrown: unknown) => thrown);
    expect((error as Error).message).toMatch(/imports \.\/crews\.mjs, which does not exist/);
  });
});
