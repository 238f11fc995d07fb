import { execFile } from 'node:child_process';
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledCacheDirectory, removeTemporaryCompiledCache } from './project-config.js';

const run = promisify(execFile);
const cliDirectory = fileURLToPath(new URL('../..', import.meta.url));

// A fresh CLI process, as each `crewline` command is: it loads the config through importWithJiti
// with no TypeScript loader in the way (tsx only loads the CLI's own sources here) and prints the
// flows it registers or the error. Its cache is the project's node_modules/.cache/crewline; TMPDIR
// points into the test's directory, to see that nothing is written there.
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
  where: { project: string; temporary: string; home?: string } = { project, temporary },
  as?: { uid: number; gid: number },
): Promise<{
  flows?: string[];
  error?: string;
  typeScriptLoaded: boolean;
}> {
  const { stdout } = await run(
    process.execPath,
    ['--conditions=@crewline/source', '--import', 'tsx', '--input-type=module', '-e', loadInChild],
    {
      cwd: cliDirectory,
      env: {
        ...process.env,
        PROJECT: where.project,
        TMPDIR: where.temporary,
        // A home of the test's own, to see that nothing is cached in the user's home either.
        HOME: where.home ?? join(root, 'home'),
        XDG_CACHE_HOME: join(where.home ?? join(root, 'home'), '.cache'),
      },
      ...as,
    },
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

/** The project's cache directory, where the compiled files are kept. */
function cacheOf(where: { project: string }): string {
  return join(where.project, 'node_modules', '.cache', 'crewline');
}

/** The directory earlier versions of the CLI kept compiled files in, under `temporary`. */
function oldCacheIn(temporary: string): string {
  return join(temporary, `crewline-compiled-${process.getuid?.() ?? userInfo().username}`);
}

/**
 * What a command left in its temporary directory besides the test's loader's cache (tsx compiles the
 * CLI's own sources there), and the files there that contain one of `keys`.
 */
async function leftInTemporary(
  temporary: string,
  keys: string[],
): Promise<{ names: string[]; holdingKeys: string[] }> {
  const names = (await readdir(temporary)).filter((name) => !name.startsWith('tsx-'));
  const holdingKeys: string[] = [];
  for (const file of await filesUnder(temporary)) {
    const text = await readFile(file, 'utf8');
    if (keys.some((key) => text.includes(key))) holdingKeys.push(file);
  }
  return { names, holdingKeys };
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

  it('keeps a key written inline in the config, or in a flow file, in the project only, and removes the copies earlier versions left in the temporary directory', async () => {
    const configKey = 'sk-planted-config-7f3a9c1e5b2d4068';
    const flowKey = 'sk-planted-flow-0b8e2d4f6a1c3957';
    const where = await makeProject('planted', {
      flow: flowFile.replace("return 'facts';", `return '${flowKey}'.length > 0 ? 'facts' : '';`),
      config: config.replace(
        'export default',
        `export const model = { apiKey: '${configKey}' };\n\nexport default`,
      ),
    });
    // What an earlier version left: its entries, one in plain text with the key.
    const old = oldCacheIn(where.temporary);
    await mkdir(old, { mode: 0o700 });
    await writeFile(join(old, 'crewline.config.ts.0123456789abcdef01234567.js'), `{}\n${configKey}`);
    await writeFile(join(old, 'tide-flow.ts.0123456789abcdef01234567.js'), `{}\n${flowKey}`);
    // Twice: the first command writes the cache, the second is served from it.
    expect(await loadInFreshProcess(where)).toEqual({ flows: ['TideFlow'], typeScriptLoaded: true });
    expect(await loadInFreshProcess(where)).toEqual({ flows: ['TideFlow'], typeScriptLoaded: false });
    expect(await leftInTemporary(where.temporary, [configKey, flowKey])).toEqual({
      names: [],
      holdingKeys: [],
    });
    await expect(lstat(old)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await filesUnder(cacheOf(where))).length).toBeGreaterThan(0);
  }, 120_000);

  it('compiles a config with no node_modules directory above it each time, writing nothing in the project, the home or TMPDIR', async () => {
    const configKey = 'sk-planted-config-2c4e6a8b0d1f3579';
    const where = {
      project: join(root, 'bare'),
      temporary: join(root, 'bare-tmp'),
      home: join(root, 'bare-home'),
    };
    await mkdir(where.project);
    await mkdir(where.temporary);
    await mkdir(where.home);
    await writeFile(join(where.project, 'package.json'), JSON.stringify({ type: 'module' }));
    await writeFile(
      join(where.project, 'crewline.config.ts'),
      `export const model: { apiKey: string } = { apiKey: '${configKey}' };\n\nexport default {};\n`,
    );
    expect(await loadInFreshProcess(where)).toEqual({ flows: [], typeScriptLoaded: false });
    expect(await loadInFreshProcess(where)).toEqual({ flows: [], typeScriptLoaded: false });
    expect(await leftInTemporary(where.temporary, [configKey])).toEqual({ names: [], holdingKeys: [] });
    expect(await filesUnder(where.project)).toEqual([
      join(where.project, 'crewline.config.ts'),
      join(where.project, 'package.json'),
    ]);
    expect(await readdir(where.home)).toEqual([]);
  }, 120_000);

  // Installed as root, run as another user (a container's `node` user): the project's node_modules
  // cannot be written; the config is compiled each time and nothing is written in the user's home
  // (which may not even exist) nor under the temporary directory.
  it.skipIf(process.getuid?.() !== 0)(
    "compiles each time, writing nothing, for a user who cannot write the project's node_modules",
    async () => {
      const nobody = { uid: 65534, gid: 65534 };
      const where = { ...(await makeProject('root-installed')), home: join(root, 'nobody-home') };
      await mkdir(where.home);
      await chown(where.home, nobody.uid, nobody.gid);
      await chown(where.temporary, nobody.uid, nobody.gid);
      // The other user can read the project (as an installed image lets it), not write to it.
      await chmod(root, 0o755);
      for (let command = 0; command < 2; command += 1) {
        expect(await loadInFreshProcess(where, nobody)).toEqual({
          flows: ['TideFlow'],
          typeScriptLoaded: true,
        });
      }
      await expect(lstat(cacheOf(where))).rejects.toMatchObject({ code: 'ENOENT' });
      expect(await readdir(where.home)).toEqual([]);
      expect((await readdir(where.temporary)).filter((name) => !name.startsWith('tsx-'))).toEqual([]);
    },
    120_000,
  );

  it('compiles again a file the config imports once it is edited', async () => {
    const where = await makeProject('edited', {
      flow: `${flowFile}\nexport const flowName: string = 'TideFlow';\n`,
      config: config
        .replace('{ TideFlow }', '{ TideFlow, flowName }')
        .replace('{ TideFlow }', '{ [flowName]: TideFlow }'),
    });
    expect(await loadInFreshProcess(where)).toEqual({ flows: ['TideFlow'], typeScriptLoaded: true });
    expect(await loadInFreshProcess(where)).toEqual({ flows: ['TideFlow'], typeScriptLoaded: false });
    await writeFile(
      join(where.project, 'tide-flow.ts'),
      `${flowFile}\nexport const flowName: string = 'SurfFlow';\n`,
    );
    expect(await loadInFreshProcess(where)).toEqual({ flows: ['SurfFlow'], typeScriptLoaded: true });
  }, 120_000);

  // Both write the same entries at once: each loads, and what is left is whole and served. A torn
  // entry would most likely fail to load; that each entry is only ever made by a rename is what the
  // absence of a temporary file left behind shows.
  it('serves two commands that compile the same config at once, each its whole entry', async () => {
    const where = await makeProject('at-once');
    const both = await Promise.all([loadInFreshProcess(where), loadInFreshProcess(where)]);
    expect(both.map((loaded) => loaded.flows)).toEqual([['TideFlow'], ['TideFlow']]);
    // What they wrote is served to the next command, and no temporary file of theirs is left.
    expect(await loadInFreshProcess(where)).toEqual({ flows: ['TideFlow'], typeScriptLoaded: false });
    const files = await filesUnder(cacheOf(where));
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((file) => file.endsWith('.tmp'))).toEqual([]);
  }, 120_000);

  it('keeps its entries in a directory of this user only', async () => {
    const status = await stat(cacheOf({ project }));
    expect(status.isDirectory()).toBe(true);
    if (process.getuid !== undefined) expect(status.mode & 0o777).toBe(0o700);
  });
});

describe('compiledCacheDirectory', () => {
  const userId = process.getuid?.();

  /** A project with a node_modules directory and its config in a folder below. */
  async function nestedProject(): Promise<{ nodeModules: string; configFile: string }> {
    const project = await mkdtemp(join(root, 'nested-'));
    await mkdir(join(project, 'node_modules'));
    await mkdir(join(project, 'config'));
    return {
      nodeModules: join(project, 'node_modules'),
      configFile: join(project, 'config', 'crewline.config.ts'),
    };
  }

  /** What the lookup says at debug level. */
  function listener(): { debug: (line: string) => void; said: string[] } {
    const said: string[] = [];
    return { said, debug: (line) => said.push(line) };
  }

  it('is .cache/crewline in the nearest node_modules directory above the config, mode 0700', async () => {
    const { nodeModules, configFile } = await nestedProject();
    const { debug, said } = listener();
    const directory = compiledCacheDirectory(configFile, { debug });
    expect(directory).toBe(join(nodeModules, '.cache', 'crewline'));
    const status = await stat(directory!);
    if (userId !== undefined) {
      expect(status.uid).toBe(userId);
      expect(status.mode & 0o777).toBe(0o700);
    }
    expect(said).toEqual([]);
  });

  it('is none, and says why, when no node_modules directory is above the config', async () => {
    const project = await mkdtemp(join(root, 'bare-'));
    const { debug, said } = listener();
    expect(compiledCacheDirectory(join(project, 'crewline.config.ts'), { debug })).toBeUndefined();
    expect(await readdir(project)).toEqual([]);
    expect(said).toEqual([
      `no node_modules directory is above ${project}: the config is compiled each time, nothing is cached`,
    ]);
  });

  it('is none when the directory is a symbolic link, which is not followed', async () => {
    const { nodeModules, configFile } = await nestedProject();
    const elsewhere = await mkdtemp(join(root, 'elsewhere-'));
    await mkdir(join(nodeModules, '.cache'));
    const planted = join(nodeModules, '.cache', 'crewline');
    await symlink(elsewhere, planted);
    const { debug, said } = listener();
    expect(compiledCacheDirectory(configFile, { debug })).toBeUndefined();
    expect(said).toEqual([
      `the project's cache ${planted} is not usable (a symbolic link): the config is compiled each time, nothing is cached`,
    ]);
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it.skipIf(userId === undefined)('is none when others may write to the directory', async () => {
    const { nodeModules, configFile } = await nestedProject();
    const planted = join(nodeModules, '.cache', 'crewline');
    await mkdir(planted, { recursive: true });
    await chmod(planted, 0o777);
    const { debug, said } = listener();
    expect(compiledCacheDirectory(configFile, { debug })).toBeUndefined();
    expect(said.join('\n')).toContain(`${planted} is not usable (writable by others)`);
  });

  // The project's cache left by `sudo crewline`, or node_modules installed by root in an image: the
  // directory is another user's. Only root can give a directory to another user.
  it.skipIf(userId !== 0)('is none when another user owns the directory', async () => {
    const { nodeModules, configFile } = await nestedProject();
    const planted = join(nodeModules, '.cache', 'crewline');
    await mkdir(planted, { recursive: true, mode: 0o700 });
    await chown(planted, 4242, 4242);
    const { debug, said } = listener();
    expect(compiledCacheDirectory(configFile, { debug })).toBeUndefined();
    expect(said.join('\n')).toContain(`${planted} is not usable (owned by uid 4242)`);
  });
});

describe('removeTemporaryCompiledCache', () => {
  const userId = process.getuid?.();

  it('removes the directory earlier versions wrote and the entries in it', async () => {
    const parent = await mkdtemp(join(root, 'old-'));
    const old = oldCacheIn(parent);
    await mkdir(old, { mode: 0o700 });
    await writeFile(join(old, 'crewline.config.ts.0123456789abcdef01234567.js'), '{}\nsecret');
    await writeFile(join(old, 'crewline.config.ts.0123456789abcdef01234567.js.1234.tmp'), '{}\nsec');
    removeTemporaryCompiledCache(parent);
    expect(await readdir(parent)).toEqual([]);
  });

  it('does not follow a symbolic link under that name, nor one in it', async () => {
    const parent = await mkdtemp(join(root, 'old-'));
    const target = await mkdtemp(join(root, 'target-'));
    await writeFile(join(target, 'keep.js'), 'kept');
    await symlink(target, oldCacheIn(parent));
    removeTemporaryCompiledCache(parent);
    expect(await readdir(target)).toEqual(['keep.js']);
    await rm(oldCacheIn(parent));
    await mkdir(oldCacheIn(parent));
    await symlink(join(target, 'keep.js'), join(oldCacheIn(parent), 'link.js'));
    removeTemporaryCompiledCache(parent);
    expect(await readFile(join(target, 'keep.js'), 'utf8')).toBe('kept');
    expect(await readdir(parent)).toEqual([]);
  });

  // Only root can give a file to another user.
  it.skipIf(userId !== 0)('leaves a directory, or an entry, another user owns', async () => {
    const parent = await mkdtemp(join(root, 'old-'));
    const old = oldCacheIn(parent);
    await mkdir(old);
    await writeFile(join(old, 'theirs.js'), 'theirs');
    await writeFile(join(old, 'mine.js'), 'mine');
    await chown(join(old, 'theirs.js'), 4242, 4242);
    removeTemporaryCompiledCache(parent);
    expect(await readdir(old)).toEqual(['theirs.js']);
    await chown(old, 4242, 4242);
    await writeFile(join(old, 'mine.js'), 'mine');
    removeTemporaryCompiledCache(parent);
    expect((await readdir(old)).sort()).toEqual(['mine.js', 'theirs.js']);
  });
});
