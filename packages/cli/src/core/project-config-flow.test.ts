import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as runtime from '@crewline/runtime';
import { createJiti } from 'jiti';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importWithJiti } from './project-config.js';

// The installed CLI (no TypeScript loader in its process) imports crewline.config.ts through
// importWithJiti, and jiti imports the packages the config names natively: the Flow class in the
// config extends the very runtime the CLI runs. This project's `@crewline/runtime` stands for the
// installed package and hands over the runtime this test process runs, which keeps that property
// without a build of the runtime.
const runtimeKey = Symbol.for('crewline.test.runtime-of-the-cli');
(globalThis as Record<symbol, unknown>)[runtimeKey] = runtime;

const runtimePackage = `const runtime = globalThis[Symbol.for('crewline.test.runtime-of-the-cli')];
export const { defineConfig, Flow, listen, persist, start } = runtime;
`;

// The flow-state page's shape: an interface, a class decorator, method decorators, typed state and
// typed parameters, a class field. Nothing here runs a model.
const flowFile = (location: string) => `import { Flow, listen, persist, start } from '@crewline/runtime';

export interface TideState {
  id: string;
  topic: string;
  notes: string[];
}

@persist({ location: ${JSON.stringify(location)} })
export class TideFlow extends Flow<TideState> {
  initialState: TideState = { id: '', topic: 'ocean tides', notes: [] };

  @start()
  research(): string {
    this.state.notes.push('research ' + this.state.topic);
    return 'facts about ' + this.state.topic;
  }

  @listen('research')
  outline(research: string): string {
    this.state.notes.push('outline from ' + research);
    return research.toUpperCase();
  }
}
`;

const config = `import { defineConfig } from '@crewline/runtime';
import { TideFlow } from './tide-flow.js';

export default defineConfig({ flows: { TideFlow } });
`;

type TideFlowClass = new () => {
  kickoff(options?: { inputs?: Record<string, unknown> }): Promise<{
    stateId: string;
    status: string;
    completedMethods: string[];
  }>;
  state: { notes: string[] };
};

describe('a crewline.config.ts that registers a Flow, loaded through jiti as the installed CLI does', () => {
  let project: string;

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'crewline-flow-config-'));
    const runtimeDirectory = join(project, 'node_modules', '@crewline', 'runtime');
    await mkdir(runtimeDirectory, { recursive: true });
    await writeFile(
      join(runtimeDirectory, 'package.json'),
      JSON.stringify({ name: '@crewline/runtime', type: 'module', exports: './index.js' }),
    );
    await writeFile(join(runtimeDirectory, 'index.js'), runtimePackage);
    await writeFile(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
    await writeFile(join(project, 'tide-flow.ts'), flowFile(join(project, '.checkpoints')));
    await writeFile(join(project, 'crewline.config.ts'), config);
  });

  afterAll(() => rm(project, { recursive: true, force: true }));

  it('keeps the standard decorators and their metadata: the flow runs its methods and saves its state', async () => {
    const loaded = await runtime.loadProjectConfig({
      cwd: project,
      importModule: importWithJiti,
      register: false,
    });
    const TideFlow = (loaded?.flows as Record<string, TideFlowClass> | undefined)?.TideFlow;
    expect(TideFlow).toBeTypeOf('function');
    const flow = new TideFlow!();
    const result = await flow.kickoff({ inputs: { id: 'tides' } });
    expect(result).toMatchObject({
      stateId: 'tides',
      status: 'completed',
      completedMethods: ['research', 'outline'],
    });
    expect(flow.state.notes).toEqual(['research ocean tides', 'outline from facts about ocean tides']);
    // @persist() on the class took effect: the state was saved under its id.
    const saved = await (TideFlow as unknown as typeof runtime.Flow).listStates();
    expect(saved.map((state) => [state.id, state.lastMethod])).toEqual([['tides', 'outline']]);
  });

  it('is not served what jiti cached for the same file before, with the decorators in legacy form', async () => {
    const cached = await mkdtemp(join(project, 'cached-'));
    await writeFile(join(cached, 'tide-flow.ts'), flowFile(join(cached, '.checkpoints')));
    await writeFile(join(cached, 'crewline.config.ts'), config);
    // What the CLI did before: jiti with its defaults, which caches the file's compiled form by its source.
    const before = createJiti(new URL('./project-config.ts', import.meta.url).href, {
      interopDefault: false,
    });
    await expect(before.import(join(cached, 'crewline.config.ts'))).rejects.toThrow(
      /decorator metadata is missing/,
    );
    const loaded = await runtime.loadProjectConfig({
      cwd: cached,
      importModule: importWithJiti,
      register: false,
    });
    expect(Object.keys(loaded?.flows ?? {})).toEqual(['TideFlow']);
  });

  it('leaves a project whose tsconfig.json asks for experimentalDecorators to the legacy form, and the flow says so', async () => {
    const legacy = await mkdtemp(join(project, 'legacy-'));
    await writeFile(
      join(legacy, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { experimentalDecorators: true } }),
    );
    await writeFile(join(legacy, 'tide-flow.ts'), flowFile(join(legacy, '.checkpoints')));
    await writeFile(join(legacy, 'crewline.config.ts'), config);
    await expect(
      runtime.loadProjectConfig({ cwd: legacy, importModule: importWithJiti, register: false }),
    ).rejects.toThrow(
      /could not load .*crewline\.config\.ts: .*decorator metadata is missing.*experimentalDecorators off/,
    );
  });
});
