import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledCacheDirectory } from './project-config.js';

const run = promisify(execFile);
const cliDirectory = fileURLToPath(new URL('../..', import.meta.url));

// A fresh CLI process, as each `crewline` command is: it loads the config through importWithJiti
// with no TypeScript loader in the way (tsx only loads the CLI's own sources here) and prints the
// flows it registers or the error. TMPDIR keeps its cache inside the test's directory.
const loadInChild = `
import { createRequire } from 'node:module';
import * as runtime from '@crewline/runtime';
import { importWithJiti } from './src/core/project-config.ts';
const typeScriptLoaded = () =>
  Object.keys(createRequire(import.meta.url).cache).some((path) => /[\\/]typescript[\\/]lib[\\/]typescript.js$/.test(path));
globalThis[Symbol.for('crewline.test.runtime-of-the-cli')] = runtime;
try {
  const loaded = await runtime.loadProjectConfig({ cwd: process.env.PROJECT, importModule: importWithJiti, register: false });
  console.log(JSON.stringify({ flows: Object.keys(loaded?.flows ?? {}), typeScriptLoaded: typeScriptLoaded() }));
} catch (error) {
  console.log(JSON.stringify({ error: String(error?.message ?? error), typeScriptLoaded: typeScriptLoaded() }));
}
`;

const runtimePackage = `const runtime = globalThis[Symbol.for('crewline.test.runtime-of-the-cli')];
export const { defineConfig, Flow, listen, start } = runtime;
`;

const flowFile = `import { Flow, listen, start } from '@crewline/runtime';

export class TideFlow extends Flow<{ id: string }> {
  @start()
  research(): string {
    return 'facts';
  }

  @listen('research')
  outline(research: string): string {
    return research.toUpperCase();
  }
}
`;

const config = `import { defineConfig } from '@crewline/runtime';
import { TideFlow } from './tide-flow.js';

export default defineConfig({ flows: { TideFlow } });
`;

let root: string;
let project: string;
let temporary: string;

async function loadInFreshProcess(
  where: { project: string; temporary: string } = { project, temporary },
): Promise<{
  flows?: string[];
  error?: string;
  typeScriptLoaded: boolean;
}> {
  const { stdout } = await run(
    process.execPath,
    ['--conditions=@crewline/source', '--import', 'tsx', '--input-type=module', '-e', loadInChild],
    { cwd: cliDirectory, env: { ...process.env, PROJECT: where.project, TMPDIR: where.temporary } },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
}

function useLegacyDecorators(legacy: boolean): Promise<void> {
  return writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { experimentalDecorators: legacy } }),
  );
}

/** A project with the flow and the config above (or the given texts), and a temporary directory. */
async function makeProject(
  name: string,
  files: { flow: string; config: string } = { flow: flowFile, config },
): Promise<{ project: string; temporary: string }> {
  const where = { project: join(root, name), temporary: join(root, `${name}-tmp`) };
  const runtimeDirectory = join(where.project, 'node_modules', '@crewline', 'runtime');
  await mkdir(runtimeDirectory, { recursive: true });
  await mkdir(where.temporary);
  await writeFile(
    join(runtimeDirectory, 'package.json'),
    JSON.stringify({ name: '@crewline/runtime', type: 'module', exports: './index.js' }),
  );
  await writeFile(join(runtimeDirectory, 'index.js'), runtimePackage);
  await writeFile(join(where.project, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(join(where.project, 'tide-flow.ts'), files.flow);
  await writeFile(join(where.project, 'crewline.config.ts'), files.config);
  return where;
}

/** Every file under `directory`, its subdirectories included. */
async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'crewline-config-cache-'));
  ({ project, temporary } = await makeProject('project'));
});

afterAll(() => rm(root, { recursive: true, force: true }));

describe('the cache of configs compiled for the installed CLI', () => {
  it('follows tsconfig.json when experimentalDecorators is flipped between two commands on the same config', async () => {
    await useLegacyDecorators(true);
    expect((await loadInFreshProcess()).error).toMatch(/decorator metadata is missing/);
    // What the error message asks for: turn experimentalDecorators off, run the command again.
    await useLegacyDecorators(false);
    expect(await loadInFreshProcess()).toMatchObject({ flows: ['TideFlow'] });
    // And back: the legacy form again, not the standard one from the cache.
    await useLegacyDecorators(true);
    expect((await loadInFreshProcess()).error).toMatch(/decorator metadata is missing/);
  }, 120_000);

  it('serves a config compiled before without loading TypeScript, and follows a base tsconfig it extends', async () => {
    await writeFile(
      join(project, 'tsconfig.base.json'),
      JSON.stringify({ compilerOptions: { experimentalDecorators: false } }),
    );
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify({ extends: './tsconfig.base.json' }));
    expect(await loadInFreshProcess()).toEqual({ flows: ['TideFlow'], typeScriptLoaded: true });
    expect(await loadInFreshProcess()).toEqual({ flows: ['TideFlow'], typeScriptLoaded: false });
    await writeFile(
      join(project, 'tsconfig.base.json'),
      JSON.stringify({ compilerOptions: { experimentalDecorators: true } }),
    );
    expect((await loadInFreshProcess()).error).toMatch(/decorator metadata is missing/);
  }, 120_000);

  it('leaves no readable copy of a key written inline in the config, or in a flow file, once loaded', async () => {
    const configKey = 'sk-planted-config-7f3a9c1e5b2d4068';
    const flowKey = 'sk-planted-flow-0b8e2d4f6a1c3957';
    const where = await makeProject('planted', {
      flow: flowFile.replace("return 'facts';", `return '${flowKey}'.length > 0 ? 'facts' : '';`),
      config: config.replace(
        'export default',
        `export const model = { apiKey: '${configKey}' };\n\nexport default`,
      ),
    });
    // Twice: the first command writes the cache, the second is served from it.
    expect(await loadInFreshProcess(where)).toEqual({ flows: ['TideFlow'], typeScriptLoaded: true });
    expect(await loadInFreshProcess(where)).toEqual({ flows: ['TideFlow'], typeScriptLoaded: false });
    const files = await filesUnder(where.temporary);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = await readFile(file, 'utf8');
      expect(text, file).not.toContain(configKey);
      expect(text, file).not.toContain(flowKey);
    }
  }, 120_000);

  it('serves two commands that compile the same config at once, each its whole entry', async () => {
    const where = await makeProject('at-once');
    const both = await Promise.all([loadInFreshProcess(where), loadInFreshProcess(where)]);
    expect(both.map((loaded) => loaded.flows)).toEqual([['TideFlow'], ['TideFlow']]);
    // What they wrote is served to the next command, and no temporary file of theirs is left.
    expect(await loadInFreshProcess(where)).toEqual({ flows: ['TideFlow'], typeScriptLoaded: false });
    expect((await filesUnder(where.temporary)).filter((file) => file.endsWith('.tmp'))).toEqual([]);
  }, 120_000);

  it('keeps its entries in a directory of this user only', async () => {
    const status = await stat(
      join(temporary, `crewline-compiled-${process.getuid?.() ?? userInfo().username}`),
    );
    expect(status.isDirectory()).toBe(true);
    if (process.getuid !== undefined) expect(status.mode & 0o777).toBe(0o700);
  });
});

describe('compiledCacheDirectory', () => {
  const userId = process.getuid?.();

  it.skipIf(userId === undefined)(
    'is a directory of this user only: the uid in its name, mode 0700',
    async () => {
      const parent = await mkdtemp(join(root, 'parent-'));
      const directory = compiledCacheDirectory(parent);
      expect(directory).toBe(join(parent, `crewline-compiled-${userId}`));
      const status = await stat(directory!);
      expect(status.uid).toBe(userId);
      expect(status.mode & 0o777).toBe(0o700);
    },
  );

  it.skipIf(userId === undefined)('is not used when others may write to it', async () => {
    const parent = await mkdtemp(join(root, 'parent-'));
    const planted = join(parent, `crewline-compiled-${userId}`);
    await mkdir(planted);
    await chmod(planted, 0o777);
    expect(compiledCacheDirectory(parent)).toBeUndefined();
  });

  // Only root can give a directory to another user.
  it.skipIf(userId !== 0)('is not used when another user owns it', async () => {
    const parent = await mkdtemp(join(root, 'parent-'));
    const planted = join(parent, `crewline-compiled-${userId}`);
    await mkdir(planted, { mode: 0o700 });
    await chown(planted, 4242, 4242);
    expect(compiledCacheDirectory(parent)).toBeUndefined();
  });
});
