import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';
import { expect } from 'vitest';
import { runOrThrow } from '../support/commands.js';
import type { CheckContext } from '../support/context.js';
import { userEnvironment } from '../support/project.js';
import { checkpointIds, runtimeAndCli, twoTaskScript } from '../support/user-scripts.js';

const pluginName = '@crewline/example-memo-provider';

/**
 * apps/memo-provider (a provider written as the runtime-state README tells plugin authors to) as a
 * plugin author publishes it: its source compiled to JavaScript, a manifest whose only crewline
 * packages are `@crewline/runtime-state` and `@crewline/events` (peers, as the singletons are), packed
 * with `npm pack`. Resolves to the tarball.
 */
async function packMemoProvider(context: CheckContext): Promise<string> {
  const source = join(context.workspaceRoot, 'apps/memo-provider/src');
  const directory = join(context.work, 'memo-provider-package');
  await mkdir(join(directory, 'dist'), { recursive: true });
  const files = (await readdir(source)).filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'));
  expect(files).toContain('index.ts');
  for (const file of files) {
    const compiled = ts.transpileModule(await readFile(join(source, file), 'utf8'), {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
      reportDiagnostics: true,
    });
    expect(compiled.diagnostics ?? []).toEqual([]);
    await writeFile(join(directory, 'dist', file.replace(/\.ts$/, '.js')), compiled.outputText);
  }
  const peer = (name: string) => `>=${context.packed.get(name)!.version} <1`;
  const manifest = {
    name: pluginName,
    version: '0.0.0',
    type: 'module',
    sideEffects: false,
    exports: { '.': './dist/index.js' },
    files: ['dist'],
    engines: { node: '>=20' },
    peerDependencies: {
      '@crewline/events': peer('@crewline/events'),
      '@crewline/runtime-state': peer('@crewline/runtime-state'),
    },
  };
  await writeFile(join(directory, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const packed = await runOrThrow('npm', ['pack', '--pack-destination', context.work, '--loglevel=error'], {
    cwd: directory,
    env: userEnvironment(),
  });
  return join(context.work, packed.stdout.trim().split('\n').at(-1)!.trim());
}

const projectConfig = `import { defineConfig } from '@crewline/runtime';
import { memoProviderEntry } from '${pluginName}';

export default defineConfig({ providers: [memoProviderEntry({ root: './memo-store' })] });
`;

// The run finds the provider by its location in the registry the config's entries make.
const runScript = twoTaskScript({
  imports: ['providerRegistry'],
  setup: 'const providers = providerRegistry(config.providers);',
  llm: 'offline:memo-writer',
  crewName: 'Memo crew',
  checkpoint: "{ location: 'memo://runs', providers }",
  after: 'await providers.close();',
});

/**
 * A third-party storage provider as users install it: the memo provider's tarball beside the
 * crewline tarballs, its entry listed in `crewline.config.ts`; a crew checkpoints to `memo://runs`
 * (and nowhere else), and the installed `crewline checkpoint list`, `info` and `resume` open that
 * location, the resumed run writing through the provider again.
 */
export async function thirdPartyProvider(context: CheckContext): Promise<void> {
  const plugin = await packMemoProvider(context);
  const project = await context.project('third-party-provider');
  await project.install([...context.tarballs(...runtimeAndCli), plugin]);
  await project.write('crewline.config.ts', projectConfig);
  await project.write('run.ts', runScript);

  const run = await project.bin('jiti', ['run.ts']);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(existsSync(join(project.directory, 'memo-store', 'runs'))).toBe(true);
  expect(existsSync(join(project.directory, '.checkpoints'))).toBe(false);

  const list = await project.bin('crewline', ['checkpoint', 'list', 'memo://runs']);
  expect(list.stderr).toBe('');
  expect(list.code).toBe(0);
  const ids = checkpointIds(list.stdout);
  expect(ids).toHaveLength(2);
  const first = [...ids].sort()[0]!;

  const info = await project.bin('crewline', ['checkpoint', 'info', first, '--location', 'memo://runs']);
  expect(info.stderr).toBe('');
  expect(info.code).toBe(0);
  expect(info.stdout).toContain(first);
  expect(info.stdout).toContain('Draft tides');

  const resume = await project.bin('crewline', ['checkpoint', 'resume', first, '--location', 'memo://runs']);
  expect(resume.code, `${resume.stdout}\n${resume.stderr}`).toBe(0);
  expect(resume.stdout).toContain('task 2 Polish the draft started');

  const after = await project.bin('crewline', ['checkpoint', 'list', 'memo://runs']);
  expect(after.code).toBe(0);
  const continued = checkpointIds(after.stdout).filter((id) => !ids.includes(id));
  expect(continued.length, 'the resumed run wrote to memo://runs').toBeGreaterThan(0);
  expect(existsSync(join(project.directory, '.checkpoints'))).toBe(false);
}
