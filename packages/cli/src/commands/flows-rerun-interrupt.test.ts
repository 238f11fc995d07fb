import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sourceCommand, tsxLoader } from '../test-support/subprocess.js';

// A project inside this package, so that its crewline.config.ts resolves @crewline/runtime.
const packageModules = fileURLToPath(new URL('../../node_modules/', import.meta.url));

/** A persisted flow whose last method waits 3 s when CREWLINE_TEST_SLOW is set: Ctrl+C lands in it. */
const flowFile = `import { Flow, listen, persist, start } from '@crewline/runtime';

@persist({ location: './.checkpoints' })
export class SlowFlow extends Flow<{ notes: string[] }> {
  initialState = { notes: [] as string[] };

  @start() research() {
    this.state.notes.push('research');
    return 'facts';
  }

  @listen('research') draft(facts: string) {
    this.state.notes.push('draft');
    return facts.toUpperCase();
  }

  @listen('draft') async edit(draft: string) {
    if (process.env.CREWLINE_TEST_SLOW) await new Promise((resolve) => setTimeout(resolve, 3000));
    this.state.notes.push('edit');
    return draft;
  }
}
`;

const config = `import { defineConfig } from '@crewline/runtime';
import { SlowFlow } from './slow-flow.js';

export default defineConfig({ flows: { SlowFlow } });
`;

/** Kicks the flow off once (fast), in the project, so that it has saves to re-run from. */
const kickoffScript = `import { SlowFlow } from './slow-flow.js';
await new SlowFlow().kickoff({ inputs: { id: 'notes-1' } });
`;

let project: string;

function crewline(args: readonly string[], env: Record<string, string> = {}) {
  return spawn(process.execPath, sourceCommand(args), {
    cwd: project,
    // As a CLI on the PATH: hints say `crewline`, not the test runner's `pnpm crewline` (commandName).
    env: { ...process.env, NO_COLOR: '1', npm_config_user_agent: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

beforeAll(async () => {
  await mkdir(packageModules, { recursive: true });
  project = await mkdtemp(join(packageModules, '.crewline-rerun-interrupt-'));
  await writeFile(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(join(project, 'slow-flow.ts'), flowFile);
  await writeFile(join(project, 'crewline.config.ts'), config);
  await writeFile(join(project, 'kickoff.ts'), kickoffScript);
  const kickoff = spawn(
    process.execPath,
    ['--conditions=@crewline/source', '--import', tsxLoader, join(project, 'kickoff.ts')],
    { cwd: project, stdio: 'inherit' },
  );
  const code = await new Promise<number | null>((resolve) => kickoff.on('close', resolve));
  if (code !== 0) throw new Error(`the kickoff of SlowFlow ended with ${code}`);
}, 60_000);
afterAll(async () => {
  if (project !== undefined) await rm(project, { recursive: true, force: true });
});

// Trial (flows) 8: Ctrl+C in `flows rerun` ended with 130 and no word of how to continue, unlike
// resume and fork.
it('Ctrl+C during flows rerun says where the run stopped and how to continue it', async () => {
  const child = crewline(['checkpoint', 'flows', 'rerun', 'notes-1', '--from', 'draft'], {
    CREWLINE_TEST_SLOW: '1',
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  // The save after draft is written, and edit (3 s) has started: the Ctrl+C lands in edit.
  const written = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /checkpoint (\S+) written/.exec(stdout);
      if (match && /method edit started/.test(stdout)) resolve(match[1]!);
    });
    child.on('close', () => reject(new Error(`rerun ended before edit: ${stdout}${stderr}`)));
  });
  child.kill('SIGINT');
  const { code, signal } = await ended;
  expect(signal === 'SIGINT' || code === 130, `${code} ${signal}`).toBe(true);
  const short = written.slice(written.lastIndexOf('-') + 1);
  expect(stderr).toContain(`crewline: interrupted; the run stopped after checkpoint ${short} on branch `);
  expect(stderr).toContain(`continue it with: crewline checkpoint resume ${short} --location ./.checkpoints`);
}, 60_000);
