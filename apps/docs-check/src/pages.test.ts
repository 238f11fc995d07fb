import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkedDocuments, repositoryRoot } from './documents.js';
import { firstMissingLine, runnablePage, shownLinePatterns } from './page-files.js';

const packageDirectory = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const tsxLoader = pathToFileURL(require.resolve('tsx')).href;
const node = [process.execPath, '--conditions=@crewline/source', '--import', tsxLoader];
const cliBin = join(repositoryRoot, 'packages/cli/src/bin.ts');

const pages = checkedDocuments()
  .map((path) => ({ path, page: runnablePage(readFileSync(join(repositoryRoot, path), 'utf8')) }))
  .filter((entry) => entry.page !== undefined);

/** A documented command line as this machine runs it: `npx [-y] tsx` and `npx [-y] crewline` from the sources. */
function commandLine(
  words: string[],
  env: Record<string, string>,
): { argv: string[]; env: Record<string, string> } {
  const own = { ...env };
  let rest = words;
  while (rest[0] !== undefined && /^[A-Z_][A-Z0-9_]*=/.test(rest[0])) {
    const [name, ...value] = rest[0].split('=');
    own[name!] = value.join('=');
    rest = rest.slice(1);
  }
  const [program, ...afterProgram] = rest;
  const [tool, ...args] =
    afterProgram[0] === '-y' || afterProgram[0] === '--yes' ? afterProgram.slice(1) : afterProgram;
  if (program === 'npx' && tool === 'tsx' && args[0] !== undefined)
    return { argv: [...node, ...args], env: own };
  if (program === 'npx' && tool === 'crewline') return { argv: [...node, cliBin, ...args], env: own };
  throw new Error(`docs-check does not know how to run "${words.join(' ')}"; use npx -y tsx or npx crewline`);
}

describe('pages whose code is written as whole files', () => {
  it('include the flow state page', () => {
    expect(pages.map((entry) => entry.path)).toContain('docs/flow-state-persistence.md');
  });

  it.each(pages.map((entry) => [entry.path, entry.page!] as const))(
    '%s runs as written: its files compile, and each command prints what the page shows',
    (path, page) => {
      // Inside this package, so that the files resolve @crewline/* as a reader's project would.
      const directory = mkdtempSync(join(packageDirectory, '.page-'));
      try {
        for (const file of page.files) writeFileSync(join(directory, file.name), file.content);
        writeFileSync(
          join(directory, 'tsconfig.json'),
          JSON.stringify({
            extends: relative(directory, join(repositoryRoot, 'tsconfig.base.json')),
            compilerOptions: { noEmit: true },
            include: page.files.filter((file) => file.name.endsWith('.ts')).map((file) => file.name),
          }),
        );
        const compiled = spawnSync(
          process.execPath,
          [require.resolve('typescript/bin/tsc'), '--noEmit', '-p', directory],
          { encoding: 'utf8' },
        );
        expect(compiled.stdout + compiled.stderr, `${path}: the files do not compile`).toBe('');

        let env: Record<string, string> = {
          ...(process.env as Record<string, string>),
          NO_COLOR: '1',
          OPENAI_API_KEY: '',
          ANTHROPIC_API_KEY: '',
          CREWLINE_MODEL: '',
        };
        expect(page.steps.length).toBeGreaterThan(0);
        for (const step of page.steps) {
          let printed = '';
          for (const words of step.commands) {
            if (words[0] === 'export') {
              const [name, ...value] = (words[1] ?? '').split('=');
              env = { ...env, [name!]: value.join('=') };
              continue;
            }
            const { argv, env: commandEnv } = commandLine(words, env);
            const result = spawnSync(argv[0]!, argv.slice(1), {
              cwd: directory,
              encoding: 'utf8',
              env: commandEnv,
            });
            const where = `${path}:${step.block.line}: ${words.join(' ')}`;
            expect(result.status, `${where}\n${result.stdout}${result.stderr}`).toBe(0);
            printed += result.stdout;
          }
          if (step.shown === undefined) continue;
          const missing = firstMissingLine(printed, shownLinePatterns(step.shown));
          expect(
            missing,
            `${path}:${step.block.line}: the output shown is not what it printed:\n${printed}`,
          ).toBe(undefined);
        }
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    },
    180_000,
  );
});
