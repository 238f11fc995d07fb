import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endsWhenOutputCloses } from './main.js';
import { providerOf } from './test-support/fixtures.js';
import { type CrewRun, writeCrewRun } from './test-support/real-crew.js';
import { sourceCommand } from './test-support/subprocess.js';

// A project inside this package, so that its crewline.config.mjs resolves @crewline/runtime.
const packageModules = fileURLToPath(new URL('../node_modules/', import.meta.url));
let project: string;
let run: CrewRun;

beforeAll(async () => {
  project = await mkdtemp(join(packageModules, '.crewline-closed-output-'));
  run = await writeCrewRun('json', project);
  // Each model call takes 400 ms: the run is still going when the reader has gone.
  await writeFile(
    join(project, 'crewline.config.mjs'),
    `import { offlineModel } from '@crewline/runtime/testing';
const model = offlineModel({ name: 'cli-test', latencyMs: 400 });
export default { models: { 'offline:cli-test': () => model } };
`,
  );
});
afterAll(async () => {
  await run?.close();
  if (project !== undefined) await rm(project, { recursive: true, force: true });
});

/** Runs `crewline <args>` and closes its stdout after the first chunk, as `| head -1` does. */
function runReadingOneChunk(args: readonly string[]) {
  const child = spawn(process.execPath, sourceCommand(args), {
    cwd: project,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.once('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    child.stdout.destroy();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

describe('a closed stdout (`crewline … | head -1`)', () => {
  // The trial: `resume … | head -1` exited 0 after one more checkpoint, the run cut off mid-way.
  it('does not cut off a resume: the run finishes and the command ends with its status', async () => {
    const first = run.checkpoints[0]!;
    const result = await runReadingOneChunk(['checkpoint', 'resume', first.id]);
    expect(result.stdout).toContain(`Resuming ${first.id}`);
    expect(result.stderr).not.toContain('unexpected error');
    expect(result.code, result.stderr).toBe(0);
    const provider = await providerOf('json');
    try {
      const written = await provider.list(provider.resolveLocation(run.location));
      const continued = written.filter((checkpoint) => checkpoint.branch !== 'main');
      expect(continued.map((checkpoint) => checkpoint.entities[0]?.completed)).toContain(3);
    } finally {
      await provider.close?.();
    }
  }, 60_000);
});

describe('endsWhenOutputCloses', () => {
  it('ends commands that only print, and no command that runs, changes storage or serves', () => {
    for (const argv of [
      ['list'],
      ['checkpoint', 'ls', '.checkpoints'],
      ['info', 'abc'],
      ['diff', 'a', 'b'],
      ['flows'],
      ['runs', 'list'],
      ['runs', 'show', 'r1'],
      ['resume', '--help'],
      ['--version'],
      ['checkpoint', 'lst'],
      ['checkpoint', '--help'],
      ['--location', 'x'],
    ])
      expect(endsWhenOutputCloses(argv), argv.join(' ')).toBe(true);
    for (const argv of [
      ['resume', 'abc'],
      ['checkpoint', 'fork', 'abc', '--branch', 'b'],
      ['flows', 'rerun', 'state', '--from', 'edit'],
      ['runs', 'enqueue', 'report'],
      ['prune', '--keep', '1'],
      ['worker'],
      ['checkpoint', 'serve'],
      ['checkpoint'],
      ['checkpoint', '--location', '.checkpoints.db'],
    ])
      expect(endsWhenOutputCloses(argv), argv.join(' ')).toBe(false);
  });
});
