import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadProjectConfig } from '@crewline/runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { importWithJiti } from './project-config.js';

// TypeScript that only a TypeScript-aware loader runs: an interface, annotations, `satisfies`.
const config = `interface Settings { readonly label: string }
const settings: Settings = { label: 'loaded by jiti' };
export default { models: {}, tools: {}, settings } satisfies { settings: Settings } & Record<string, unknown>;
`;

const projects: string[] = [];

async function project(packageJson: object): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'crewline-config-'));
  projects.push(directory);
  await writeFile(join(directory, 'package.json'), JSON.stringify(packageJson));
  await writeFile(join(directory, 'crewline.config.ts'), config);
  return directory;
}

afterAll(() => Promise.all(projects.map((path) => rm(path, { recursive: true, force: true }))));

describe('crewline.config.ts through jiti (the installed CLI has no TypeScript loader)', () => {
  it.each([
    ['an ES module project', { type: 'module' }],
    ['a CommonJS project (no "type")', {}],
  ])('loads the config of %s', async (_name, packageJson) => {
    const cwd = await project(packageJson);
    const loaded = await loadProjectConfig({ cwd, importModule: importWithJiti, register: false });
    expect((loaded as { settings?: unknown } | undefined)?.settings).toEqual({ label: 'loaded by jiti' });
  });

  it('rejects a broken file with the reason', async () => {
    const cwd = await project({ type: 'module' });
    await writeFile(join(cwd, 'crewline.config.ts'), 'export default {{ broken');
    await expect(loadProjectConfig({ cwd, importModule: importWithJiti, register: false })).rejects.toThrow(
      /could not load .*crewline\.config\.ts/,
    );
  });
});
