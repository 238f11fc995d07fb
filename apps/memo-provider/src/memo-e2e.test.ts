// A third-party provider end to end, as a user meets it: a crew checkpoints to memo:// locations,
// then the real `crewline` binary — which knows the provider only from crewline.config.ts — lists,
// inspects and resumes that run, and the resumed run keeps writing through the provider its
// checkpoint stored.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Agent, Crew, providerRegistry, Task } from '@crewline/runtime';
import { readDocument, type StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoProviderEntry } from './memo-entry.js';
import { MemoProvider } from './memo-provider.js';

// The project lives under this package's node_modules so that its crewline.config.ts resolves
// `@crewline/runtime` as a user's project resolves its installed copy.
const project = fileURLToPath(
  new URL(`../node_modules/.crewline-test/memo-${process.pid}/`, import.meta.url),
);
const root = join(project, 'memo-store');
const entrySource = fileURLToPath(new URL('./index.ts', import.meta.url));
// The CLI from source (the workspace package this app depends on), as `pnpm crewline` runs it.
const cliBin = fileURLToPath(new URL('../node_modules/@crewline/cli/src/bin.ts', import.meta.url));
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

function crewline(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@crewline/source', '--import', tsxLoader, cliBin, ...args],
      { cwd: project, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function twoTaskCrew(checkpoint: ConstructorParameters<typeof Crew>[0]['checkpoint']): Crew {
  const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Plain', llm: 'offline:memo-writer' });
  return new Crew({
    name: 'Memo crew',
    agents: [writer],
    tasks: [
      new Task({ description: 'Draft {topic}', expectedOutput: 'A draft', agent: writer }),
      new Task({ description: 'Polish the draft', expectedOutput: 'A paragraph', agent: writer }),
    ],
    checkpoint,
  });
}

describe('a third-party provider registered in crewline.config.ts', () => {
  const reader = new MemoProvider({ root });
  let written: StoredCheckpoint[];

  beforeAll(async () => {
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(project, 'crewline.config.ts'),
      `import { defineConfig } from '@crewline/runtime';
import { memoProviderEntry } from ${JSON.stringify(entrySource)};

export default defineConfig({ providers: [memoProviderEntry({ root: ${JSON.stringify(root)} })] });
`,
    );
    // The run names the provider and the registry its entry is in: its checkpoints store the kind
    // "memo" and the options the entry says to store (its root).
    const providers = providerRegistry([memoProviderEntry({ root })]);
    await twoTaskCrew({ location: 'memo://runs', provider: new MemoProvider({ root }), providers }).kickoff({
      inputs: { topic: 'tides' },
    });
    written = await reader.list('memo://runs');
  });

  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('checkpoints through it: one checkpoint per completed task, the provider stored by kind and options', async () => {
    expect(written).toHaveLength(2);
    expect(written[0]!.reference).toBe(`memo://runs#${written[0]!.id}`);
    const document = await readDocument(reader, 'memo://runs', written[1]!.id);
    expect(document.entities[0]!.data.checkpoint).toMatchObject({
      location: 'memo://runs',
      providerKind: 'memo',
      providerOptions: { root },
    });
  });

  it('a run given only the location finds the provider in the registry', async () => {
    const providers = providerRegistry([memoProviderEntry({ root })]);
    await twoTaskCrew({ location: 'memo://by-location', providers }).kickoff({ inputs: { topic: 'reefs' } });
    expect(await reader.list('memo://by-location')).toHaveLength(2);
    await providers.close();
    const unclaimed = await twoTaskCrew({ location: 'memo://nowhere' })
      .kickoff({ inputs: { topic: 'reefs' } })
      .catch((error: unknown) => error);
    expect(unclaimed).toMatchObject({ code: 'provider_unavailable' });
    expect(String(unclaimed)).toContain('no checkpoint provider claims "memo://nowhere"');
  });

  it('crewline checkpoint list and info open the memo location', async () => {
    const list = await crewline(['checkpoint', 'list', 'memo://runs']);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    for (const checkpoint of written) expect(list.stdout).toContain(checkpoint.id);
    const info = await crewline(['checkpoint', 'info', written[0]!.id, '--location', 'memo://runs']);
    expect(info.stderr).toBe('');
    expect(info.code).toBe(0);
    expect(info.stdout).toContain(written[0]!.id);
    expect(info.stdout).toContain('Draft tides');
  }, 60_000);

  it('crewline checkpoint resume continues the run through the provider its checkpoint stored', async () => {
    const first = written[0]!;
    const resume = await crewline(['checkpoint', 'resume', first.id, '--location', 'memo://runs']);
    expect(resume.code).toBe(0);
    expect(resume.stdout).toContain('task 2 Polish the draft started');
    const after = await reader.list('memo://runs');
    const continued = after.filter((checkpoint) => !written.some((before) => before.id === checkpoint.id));
    // The first checkpoint is not its run's latest: the continuation goes on a new branch of the
    // same location, its first checkpoint naming the one it came from.
    expect(continued.length).toBeGreaterThan(0);
    expect(continued[0]!.parentId).toBe(first.id);
    expect(continued.at(-1)!.entities[0]).toMatchObject({ completed: 2, total: 2 });
    const document = await readDocument(reader, 'memo://runs', continued.at(-1)!.id);
    expect(document.entities[0]!.data.checkpoint).toMatchObject({
      providerKind: 'memo',
      providerOptions: { root },
    });
  }, 60_000);

  it('without the entry in crewline.config.ts, the CLI says that no provider claims the location', async () => {
    writeFileSync(join(project, 'crewline.config.ts'), `export default {};\n`);
    const list = await crewline(['checkpoint', 'list', 'memo://runs']);
    expect(list.code).toBe(5);
    expect(list.stderr).toContain('no checkpoint provider reads memo:// URLs such as memo://runs');
    expect(list.stderr).toContain('`providers` of crewline.config.ts');
  }, 60_000);
});
