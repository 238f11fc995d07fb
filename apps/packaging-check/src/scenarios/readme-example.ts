import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { CheckContext } from '../support/context.js';
import { checkpointIds, runtimeAndCli } from '../support/user-scripts.js';
import { explorerServes } from './explorer.js';

// TypeScript only a TypeScript-aware loader runs (an interface, an annotation), and a mark that the
// installed CLI, which has no TypeScript loader of node's, loaded it.
const projectConfig = `import { writeFileSync } from 'node:fs';
import { defineConfig } from '@crewline/runtime';

interface Mark { readonly loadedBy: string }
const mark: Mark = { loadedBy: 'crewline' };
writeFileSync(new URL('./config-loaded.json', import.meta.url), JSON.stringify(mark));

export default defineConfig({});
`;

/**
 * A new user's first minutes: `npm install @crewline/runtime @crewline/cli`, the README's 30-second
 * example (offline model, no key) run with jiti, then `crewline checkpoint list`, `info` and `resume`
 * on the checkpoints it wrote, with a `crewline.config.ts` in the project, and `crewline checkpoint
 * serve` (the lineage explorer) over them.
 */
export async function readmeExampleAndCli(context: CheckContext): Promise<void> {
  const project = await context.project('readme-example');
  await project.install(context.tarballs(...runtimeAndCli));
  context.report(`install size, @crewline/runtime + @crewline/cli: ${await project.installSize()}`);

  const example = await readFile(
    join(context.workspaceRoot, 'apps/docs-check/snippets/quick-start.ts'),
    'utf8',
  );
  await project.write('quick-start.ts', example);
  const quickStart = await project.bin('jiti', ['quick-start.ts']);
  expect(quickStart.stderr).toBe('');
  expect(quickStart.code).toBe(0);
  expect(quickStart.stdout).toContain('[offline model]');
  expect(quickStart.stdout).toMatch(/^Research on fork\/[\w.-]+: One fact only/m);

  await project.write('crewline.config.ts', projectConfig);
  const list = await project.bin('crewline', ['checkpoint', 'list']);
  expect(list.stderr).toBe('');
  expect(list.code).toBe(0);
  expect(list.stdout).toContain('fork/');
  const ids = checkpointIds(list.stdout);
  expect(ids.length).toBeGreaterThanOrEqual(3);

  // Before resume adds checkpoints: the explorer's graph counts what list printed.
  await explorerServes(project, ids.length);

  const info = await project.bin('crewline', ['checkpoint', 'info']);
  expect(info.stderr).toBe('');
  expect(info.code).toBe(0);

  const oldest = [...ids].sort()[0]!;
  const resume = await project.bin('crewline', ['checkpoint', 'resume', oldest]);
  expect(resume.code, `${resume.stdout}\n${resume.stderr}`).toBe(0);
  expect(resume.stdout).toContain('[offline model]');
  expect(existsSync(join(project.directory, 'config-loaded.json'))).toBe(true);
  expect(resume.stderr).not.toMatch(/copies of @crewline\/events/);
}
