import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { commands } from '@crewline/cli';
import { JsonProvider } from '@crewline/provider-json';
import { CHECKPOINT_FORMAT, CHECKPOINT_FORMAT_VERSION, validateMetadata } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { parseTutorialOptions } from '../../tutorial/src/options.js';
import { benchMarker, resultsAvailable } from './bench-tables.js';
import { checkedDocuments, repositoryRoot } from './documents.js';
import { codeBlocks, localLinks, snippetMarker } from './markdown-blocks.js';
import { fileMarker } from './page-files.js';
import { snippetText } from './regions.js';
import { shellCommands } from './shell-words.js';

const packageDirectory = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const snippetsDirectory = join(packageDirectory, 'snippets');
const require = createRequire(import.meta.url);
const tsxLoader = pathToFileURL(require.resolve('tsx')).href;

/** Runs one snippet file in `directory` with the offline model: no key, no model from the environment. */
function runSnippet(name: string, directory: string) {
  return spawnSync(
    process.execPath,
    ['--conditions=@crewline/source', '--import', tsxLoader, join(snippetsDirectory, name)],
    {
      cwd: directory,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', CREWLINE_MODEL: '' },
    },
  );
}

const documents = checkedDocuments().map((path) => ({
  path,
  text: readFileSync(join(repositoryRoot, path), 'utf8'),
}));

/** What each snippet file prints when it runs (in an empty directory, with the offline model). */
const expectedOutput: Record<string, RegExp[]> = {
  'quick-start.ts': [
    /^\[offline model\] default answering: Write a summary/m,
    /^Research on fork\/[\w.-]+: One fact only/m,
  ],
  'providers.ts': [/^json: \d{8}T\d{9}-[0-9a-f]{8}$/m, /^sqlite: \d{8}T\d{9}-[0-9a-f]{8}$/m],
  'tutorial-steps.ts': [
    /^stopped: .*simulated failure on call 2/m,
    /^resumed with 1 model call: \[offline model\] tutorial answering: Write a summary$/m,
    /^forked onto experiment-a: /m,
  ],
  'events-readme.ts': [/^task done: Summarise events$/m, /^files in my_checkpoints: [1-9]\d*$/m],
  'event-types.ts': [/^checkpoints on task_completed, llm_call_completed, SIGINT: \d{8}T\d{9}-[0-9a-f]{8}$/m],
  'json-provider.ts': [/^json: \d{8}T\d{9}-[0-9a-f]{8}$/m],
  'sqlite-provider.ts': [/^database written: true, resumed from \d{8}T\d{9}-[0-9a-f]{8}$/m],
  // lastCheckpoint: the fork wrote a checkpoint on its branch (an edit of the last task ran nothing
  // and wrote none, and this example printed the in-memory edit all the same).
  'runtime-fork.ts': [
    /^forked onto shorter-research: One fact only: AI needs data\.$/m,
    /^summary written again on the fork: Write a summary$/m,
  ],
  'runtime-continue.ts': [/^checkpoint_completed$/m, /^continued: crew on what-if$/m],
  'runtime-flow.ts': [/^MyFlow restored from \.\/flow_cp$/m],
  'models-resolve.ts': [
    /^openai:gpt-4o-mini -> openai:gpt-4o-mini$/m,
    /^ollama:llama3\.1:8b -> ollama:llama3\.1:8b$/m,
    /^offline:tutorial -> offline:tutorial$/m,
  ],
  'models-registry.ts': [/^myproxy:gpt-4o-mini -> myproxy\.responses$/m],
  'define-tool.ts': [/^tool search$/m],
  'memory-knowledge.ts': [/^memory: 1 item\(s\)$/m, /^knowledge: .*"origin":"policy\.md"/m],
};

/**
 * Snippet files that are type-checked but not run, and why: they need a network model, a project
 * of the reader's, or a test runner, or they only list signatures.
 */
const compiledOnly: Record<string, string> = {
  'cli-readme.ts': 'runs the CLI in a project directory of the reader',
  'cli-project/crewline.config.ts': "a project's config file; the CLI loads it",
  'provider-contract.ts': 'a declaration listing; its type test compares it with the real contract',
  'provider-testkit/my-provider.test.ts': "registers the conformance suite; the providers' own tests run it",
  'provider-testkit/writer-process.ts': 'a child process the conformance suite spawns with arguments',
  'runtime-quick-start.ts': 'calls OpenAI (quick-start.ts runs the same crew offline)',
  'runtime-options.ts': 'option lists; destructuring the options types checks every name',
  'runtime-project/crewline.config.ts': "a project's config file; the CLI loads it",
  'offline-model-options.ts': "asserts on the reader's crew; the runtime's tests run these options",
};

describe('code in README.md, docs/, and the app and package READMEs and docs', () => {
  it('checks the documents it should', () => {
    expect(documents.map((document) => document.path)).toEqual(
      expect.arrayContaining(['README.md', 'docs/flow-state-persistence.md', 'docs/tutorial.md']),
    );
  });

  it('shows only TypeScript that is a file or region of a compiled, tested file, or a file of a run page', () => {
    const problems: string[] = [];
    for (const document of documents) {
      for (const block of codeBlocks(document.text)) {
        if (!['ts', 'typescript', 'tsx'].includes(block.language)) continue;
        const where = `${document.path}:${block.line}`;
        // A whole file of a page the reader follows: pages.test.ts compiles and runs the page.
        if (fileMarker(block.before) !== undefined) continue;
        const marker = snippetMarker(block.before);
        if (!marker) {
          problems.push(
            `${where}: a TypeScript block needs a <!-- snippet: path#region --> line above it, or <!-- file: name.ts --> on a page written as whole files`,
          );
          continue;
        }
        const file = join(repositoryRoot, marker.path);
        if (!existsSync(file)) {
          problems.push(`${where}: ${marker.path} does not exist`);
          continue;
        }
        if (!isCompiledSource(marker.path)) {
          problems.push(`${where}: ${marker.path} is not in a package whose typecheck and tests compile it`);
        }
        const expected = snippetText(readFileSync(file, 'utf8'), marker.region);
        if (expected === undefined) {
          problems.push(`${where}: ${marker.path} has no region "${marker.region}"`);
        } else if (expected !== block.content.replace(/\s+$/, '')) {
          problems.push(
            `${where}: the block differs from ${marker.path}${marker.region ? `#${marker.region}` : ''}; run pnpm --filter @crewline/docs-check sync to copy it:\n${expected}`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('uses every snippet file somewhere, and knows whether it runs or only compiles', () => {
    const shown = new Set<string>();
    for (const document of documents) {
      for (const block of codeBlocks(document.text)) {
        const marker = snippetMarker(block.before);
        if (marker?.path.startsWith('apps/docs-check/snippets/')) {
          shown.add(marker.path.slice('apps/docs-check/snippets/'.length));
        }
      }
    }
    const files = (readdirSync(snippetsDirectory, { recursive: true }) as string[])
      .filter((name) => name.endsWith('.ts'))
      .map((name) => name.split(sep).join('/'));
    // A file that is not shown must be imported by one that is (a module the shown code needs).
    const imported = new Set(
      [...shown].flatMap((name) => relativeImports(join(snippetsDirectory, name), snippetsDirectory)),
    );
    for (const name of files) {
      expect(shown.has(name) || imported.has(name), `snippets/${name} is not shown in any document`).toBe(
        true,
      );
    }
    for (const name of shown) {
      expect(
        Object.hasOwn(expectedOutput, name) !== Object.hasOwn(compiledOnly, name),
        `snippets/${name} must be in exactly one of expectedOutput and compiledOnly`,
      ).toBe(true);
    }
    expect([...Object.keys(expectedOutput), ...Object.keys(compiledOnly)].sort()).toEqual([...shown].sort());
  });

  it('compiles every snippet file (tsc --noEmit on this package)', () => {
    const result = spawnSync(
      process.execPath,
      [require.resolve('typescript/bin/tsc'), '--noEmit', '-p', packageDirectory],
      {
        encoding: 'utf8',
      },
    );
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  }, 120_000);

  it.each(Object.keys(expectedOutput))(
    'runs snippets/%s in an empty directory',
    (name) => {
      const directory = mkdtempSync(join(tmpdir(), 'crewline-docs-'));
      try {
        const result = runSnippet(name, directory);
        expect(result.status, result.stderr).toBe(0);
        for (const pattern of expectedOutput[name]!) expect(result.stdout).toMatch(pattern);
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    },
    60_000,
  );

  it('runs snippets/quick-start.ts twice in one directory: each run forks its own checkpoint', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'crewline-docs-'));
    const runQuickStart = () => runSnippet('quick-start.ts', directory);
    try {
      for (const run of [1, 2]) {
        const result = runQuickStart();
        expect(result.status, `run ${run}: ${result.stderr}`).toBe(0);
        for (const pattern of expectedOutput['quick-start.ts']!) expect(result.stdout).toMatch(pattern);
      }
      const checkpoints = await new JsonProvider().list(join(directory, '.checkpoints'));
      const runs = new Map<string, typeof checkpoints>();
      for (const checkpoint of checkpoints) {
        runs.set(checkpoint.lineageId, [...(runs.get(checkpoint.lineageId) ?? []), checkpoint]);
      }
      // Two kickoffs on main and two forks; each fork starts from the first checkpoint of its own kickoff.
      const kickoffs = [...runs.values()].filter((run) => run[0]!.parentId === null);
      const forks = [...runs.values()].filter((run) => run[0]!.parentId !== null);
      expect(kickoffs).toHaveLength(2);
      expect(forks.map((fork) => fork[0]!.parentId).sort()).toEqual(kickoffs.map((run) => run[0]!.id).sort());
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }, 120_000);

  it('runs only commands that exist: root scripts, demo options, crewline commands', () => {
    const rootScripts = Object.keys(
      (
        JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as {
          scripts: Record<string, string>;
        }
      ).scripts,
    );
    const pnpmBuiltins = new Set([
      'install',
      'i',
      'add',
      'exec',
      'dlx',
      'run',
      '--filter',
      '-C',
      '--dir',
      '-s',
      '--silent',
    ]);
    const cliCommands = new Set(commands.flatMap((command) => [command.name, ...(command.aliases ?? [])]));
    const problems: string[] = [];
    for (const document of documents) {
      for (const block of codeBlocks(document.text)) {
        if (!['bash', 'sh', 'shell', 'console'].includes(block.language)) continue;
        for (const words of shellCommands(block.content)) {
          const where = `${document.path}:${block.line}: ${words.join(' ')}`;
          const [program, ...args] = words;
          let cliArgs: string[] | undefined;
          if (program === 'pnpm') {
            // `pnpm -w <script>` runs a root script from any directory.
            const [script, ...rest] =
              args[0] === '-w' || args[0] === '--workspace-root' ? args.slice(1) : args;
            if (script === undefined || pnpmBuiltins.has(script)) continue;
            if (!rootScripts.includes(script)) problems.push(`${where}: no root script "${script}"`);
            if (script === 'demo') {
              try {
                parseTutorialOptions(rest.map(placeholderValue), {});
              } catch (error) {
                problems.push(`${where}: ${(error as Error).message}`);
              }
            }
            if (script === 'crewline') cliArgs = rest;
          } else if (program === 'crewline') {
            cliArgs = args;
          } else if (program === 'npx') {
            const tool = args[0] === '-y' || args[0] === '--yes' ? args.slice(1) : args;
            if (tool[0] === 'crewline') cliArgs = tool.slice(1);
          }
          if (cliArgs) {
            // A time prefix (`2026112`) names every checkpoint written in that period: the command
            // fails as ambiguous as soon as there are two. The short id `list` prints is unique.
            const timePrefix = cliArgs.find((word) => /^20\d{5,12}$/.test(word));
            if (timePrefix !== undefined) {
              problems.push(
                `${where}: "${timePrefix}" is the start of a time, shared by every checkpoint written then; show the short id \`crewline checkpoint list\` prints (its random part, such as 3f9a2b1c)`,
              );
            }
            const [first, second] = cliArgs;
            const name = first === 'checkpoint' || first === 'checkpoints' ? second : first;
            if (name !== undefined && !name.startsWith('-') && !cliCommands.has(name)) {
              problems.push(`${where}: crewline has no command "${name}"`);
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('writes npx -y for a tool a reader may not have installed (npx asks, and a non-interactive shell cancels)', () => {
    // `npx crewline` is what the docs have the reader install first, so npx finds it without asking.
    const problems: string[] = [];
    for (const document of documents) {
      for (const match of document.text.matchAll(/\bnpx\s+(?!-y\b|--yes\b|crewline\b)(\S+)/g)) {
        const line = document.text.slice(0, match.index).split('\n').length;
        problems.push(`${document.path}:${line}: write npx -y ${match[1]!.replace(/`$/, '')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('shows checkpoint excerpts in the format the code writes', () => {
    let excerpts = 0;
    for (const document of documents) {
      for (const block of codeBlocks(document.text)) {
        if (block.before !== '<!-- checkpoint-excerpt -->') continue;
        excerpts += 1;
        const [envelope, metadata] = block.content.split('\n');
        const head = JSON.parse(`${envelope}${metadata!.replace(/,$/, '')}}`) as Record<string, unknown>;
        expect(head.format, document.path).toBe(CHECKPOINT_FORMAT);
        expect(head.formatVersion, document.path).toBe(CHECKPOINT_FORMAT_VERSION);
        expect(() => validateMetadata(head.metadata)).not.toThrow();
      }
    }
    expect(excerpts).toBeGreaterThan(0);
  });

  it('links only to files that exist', () => {
    const problems: string[] = [];
    for (const document of documents) {
      for (const link of localLinks(document.text)) {
        const target = resolve(repositoryRoot, dirname(document.path), link);
        if (!existsSync(target))
          problems.push(`${document.path}: ${link} (${relative(repositoryRoot, target)})`);
      }
    }
    expect(problems).toEqual([]);
  });
});

/** A markdown table row with its cells trimmed (the formatter pads columns; the figures must not change). */
function tableRow(line: string): string {
  return line
    .trim()
    .split('|')
    .map((cell) => (/^\s*:?-+:?\s*$/.test(cell) ? '---' : cell.trim()))
    .join('|');
}

/** `<ref>`-style placeholders of a documented command, replaced by something the parser accepts. */
function placeholderValue(word: string): string {
  return /^<[^>]+>$/.test(word) ? 'placeholder' : word;
}

/** Snippet files (relative to `root`, with `/`) that `file` imports with a relative `./` or `../` path. */
function relativeImports(file: string, root: string): string[] {
  const imports: string[] = [];
  for (const match of readFileSync(file, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)) {
    const target = resolve(dirname(file), `${match[1]}.ts`);
    if (target.startsWith(root + sep) && existsSync(target)) {
      imports.push(relative(root, target).split(sep).join('/'));
      imports.push(...relativeImports(target, root));
    }
  }
  return imports;
}

/** Source files that a package's `typecheck` compiles and its tests run. */
function isCompiledSource(path: string): boolean {
  if (path.startsWith('apps/docs-check/snippets/')) return true;
  const match = /^(apps|packages)\/([^/]+)\//.exec(path);
  if (!match || !path.endsWith('.ts')) return false;
  const manifest = join(repositoryRoot, match[1]!, match[2]!, 'package.json');
  if (!existsSync(manifest)) return false;
  const scripts =
    (JSON.parse(readFileSync(manifest, 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
  return scripts.typecheck !== undefined && scripts.test !== undefined;
}

describe('figures copied from benchmark results', () => {
  it('match the result files they name, row for row', () => {
    const problems: string[] = [];
    let tables = 0;
    for (const document of documents) {
      const lines = document.text.split('\n');
      lines.forEach((line, index) => {
        const path = benchMarker(line);
        if (path === undefined) return;
        tables += 1;
        const file = join(repositoryRoot, path);
        if (!resultsAvailable(repositoryRoot, path)) {
          // No (committed) results yet: only a placeholder that says how to produce them is allowed.
          const table = lines
            .slice(index + 1)
            .join('\n')
            .split('\n\n')[0]!;
          if (!table.includes('run `pnpm bench`')) {
            problems.push(
              `${document.path}:${index + 1}: ${path} is not committed; show a placeholder table saying run \`pnpm bench\``,
            );
          }
          return;
        }
        const results = new Set(readFileSync(file, 'utf8').split('\n').map(tableRow));
        for (let row = index + 1; row < lines.length && lines[row]!.startsWith('|'); row += 1) {
          if (!results.has(tableRow(lines[row]!))) {
            problems.push(
              `${document.path}:${row + 1}: not in ${path} (pnpm --filter @crewline/docs-check sync copies the new figures): ${lines[row]}`,
            );
          }
        }
      });
    }
    expect(problems).toEqual([]);
    expect(tables).toBeGreaterThan(0);
  });
});
