import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, Crew, registerProject, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { runCrewlineProcess } from '../test-support/subprocess.js';

// The project lives under this package's node_modules so that its crewline.config.ts resolves
// `@crewline/runtime` exactly as a user's project resolves its installed copy.
const projects = new URL('../../node_modules/.crewline-test/', import.meta.url).pathname;

const config = `import { defineConfig } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';

export default defineConfig({
  models: { 'house:writer': () => offlineModel({ name: 'house-writer' }) },
});
`;

describe('crewline.config.ts is loaded before resume and fork', () => {
  const project = join(projects, `config-${process.pid}`);
  let checkpoints: StoredCheckpoint[];

  beforeAll(async () => {
    await mkdir(project, { recursive: true });
    await writeFile(join(project, 'crewline.config.ts'), config);
    // The run itself registers the model in this process; the CLI runs in another process and can
    // only know it from crewline.config.ts.
    registerProject({ models: { 'house:writer': () => offlineModel({ name: 'house-writer' }) } });
    const provider = await providerOf('json');
    const location = join(project, '.checkpoints');
    const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Plain', llm: 'house:writer' });
    const crew = new Crew({
      name: 'House crew',
      agents: [writer],
      tasks: [
        new Task({ description: 'Draft {topic}', expectedOutput: 'A draft', agent: writer }),
        new Task({ description: 'Polish the draft', expectedOutput: 'A paragraph', agent: writer }),
      ],
      checkpoint: { location, provider },
    });
    await crew.kickoff({ inputs: { topic: 'gardens' } });
    checkpoints = await provider.list(provider.resolveLocation(location));
  });

  afterAll(() => rm(project, { recursive: true, force: true }));

  it('resumes a crew whose model is registered only in crewline.config.ts', async () => {
    const result = await runCrewlineProcess(['checkpoint', 'resume', checkpoints[0]!.id], { cwd: project });
    // The first checkpoint is no longer the newest of its run: the only thing said on stderr is that
    // the continuation goes to a new branch.
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        /^crewline warn \[runtime\] checkpoint .* is not the latest of its run .*new branch/,
      ),
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('task 2 Polish the draft started');
    expect(result.stdout).toContain('[offline model] house-writer');
  }, 60_000);

  it('without the config, says what to register in one line and exits 6', async () => {
    await rename(join(project, 'crewline.config.ts'), join(project, 'moved-away.ts'));
    try {
      const result = await runCrewlineProcess(['checkpoint', 'fork', checkpoints[0]!.id], { cwd: project });
      expect(result.code).toBe(6);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      // No "Forking …" heading and plan above the refusal: nothing ran.
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^crewline: .*house:writer.*crewline\.config\.ts/);
    } finally {
      await rename(join(project, 'moved-away.ts'), join(project, 'crewline.config.ts'));
    }
  }, 60_000);

  it('a broken config is reported in one line', async () => {
    await writeFile(join(project, 'crewline.config.ts'), 'export default {{ broken');
    try {
      const result = await runCrewlineProcess(['checkpoint', 'resume', checkpoints[0]!.id], { cwd: project });
      expect(result.code).toBe(1);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain('crewline.config.ts');
    } finally {
      await writeFile(join(project, 'crewline.config.ts'), config);
    }
  }, 60_000);
});
