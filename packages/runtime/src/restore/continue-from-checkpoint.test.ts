import { AsyncResource } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type BaseEvent, eventBus, SigIntEvent } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Run } from '../checkpointing/run.js';
import {
  checkpointFiles,
  lookupTool,
  readCheckpoint,
  threeTaskCrew,
  toolUsingModel,
} from '../e2e/support/fixtures.js';
import { useTemporaryDirectory } from '../e2e/support/use-temporary-directory.js';
import { loadProjectConfig } from '../project-config/load-project-config.js';
import { ProjectRegistry, projectRegistry } from '../project-config/project-config.js';
import { continueFromCheckpoint } from './continue-from-checkpoint.js';

const directory = useTemporaryDirectory();

/** A crew run that stops in its review task, checkpointed on every task_completed. */
async function interruptedRun(location: string): Promise<void> {
  const failing = toolUsingModel({
    failOn: (call) => JSON.stringify(call.messages[0]).includes('Current task: Review'),
  });
  const { crew } = threeTaskCrew(failing, { checkpoint: { location } });
  await crew.kickoff({ inputs: { topic: 'AI' } }).catch(() => undefined);
}

// Runs first: nothing registered the custom tool yet.
describe('a checkpoint the code cannot rebuild', () => {
  it('fails with not_rebuildable, naming what to register in crewline.config.ts', async () => {
    const location = join(directory.path, 'cp');
    await interruptedRun(location);
    const error = await continueFromCheckpoint({ reference: location, mode: 'resume' }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'not_rebuildable' });
    expect((error as Error).message).toMatch(/lookup/);
    expect((error as Error).message).toMatch(/crewline\.config\.ts/);
  });
});

describe('continueFromCheckpoint', () => {
  // The scripted offline model is a custom model: like any, it is registered under the id stored.
  const registry = () =>
    new ProjectRegistry().register({
      tools: { lookup: lookupTool },
      models: { 'offline:default': toolUsingModel() },
    });

  it('resumes a crew from a directory (its latest checkpoint) and reports progress', async () => {
    const location = join(directory.path, 'cp');
    await interruptedRun(location);
    const events: BaseEvent[] = [];
    const result = await continueFromCheckpoint({
      reference: location,
      mode: 'resume',
      registry: registry(),
      onEvent: (event) => events.push(event),
    });
    const { crew } = threeTaskCrew(toolUsingModel());
    const uninterrupted = await crew.kickoff({ inputs: { topic: 'AI' } });
    expect(result).toMatchObject({
      kind: 'crew',
      name: 'research-crew',
      branch: 'main',
      output: uninterrupted.raw,
    });
    expect(result.lastCheckpoint).toBe(checkpointFiles(location).at(-1));
    expect(events.map((event) => event.type)).toContain('task_completed');
    expect(events.map((event) => event.type)).not.toContain('crew_kickoff_started');
  });

  it('forks with an edited task output by flat index, on a generated branch', async () => {
    const location = join(directory.path, 'cp');
    await interruptedRun(location);
    const first = checkpointFiles(location)[0]!; // research done
    const result = await continueFromCheckpoint({
      reference: first,
      mode: 'fork',
      taskOutputs: { 0: 'EDITED RESEARCH' },
      registry: registry(),
    });
    expect(result.branch).toMatch(/^fork\//);
    const forkFiles = checkpointFiles(location).filter((file) => file.includes('/fork/'));
    expect(forkFiles).toHaveLength(2); // write and review
    const last = readCheckpoint(forkFiles.at(-1)!);
    const tasks = last.entities[0]!.data.tasks as { output: { raw: string; edited: boolean } }[];
    expect(tasks[0]!.output).toMatchObject({ raw: 'EDITED RESEARCH', edited: true });
    expect(readCheckpoint(forkFiles[0]!).metadata.parentId).toBe(readCheckpoint(first).metadata.id);
  });

  it('reports only its own run when two continuations run at once in one process', async () => {
    // Found by a trial: two forks started from the explorer each collected the other's progress lines
    // and could report the other's branch and last checkpoint (both emit on the process-wide bus).
    const location = join(directory.path, 'cp');
    await interruptedRun(location);
    const first = checkpointFiles(location)[0]!;
    const seen = { a: [] as string[], b: [] as string[] };
    const fork = (branch: 'a' | 'b') =>
      continueFromCheckpoint({
        reference: first,
        mode: 'fork',
        branch: `what-if-${branch}`,
        registry: registry(),
        onEvent: (event) => {
          if (event.type === 'checkpoint_completed')
            seen[branch].push((event as unknown as { branch: string }).branch);
        },
      });
    const [a, b] = await Promise.all([fork('a'), fork('b')]);
    expect(a.branch).toBe('what-if-a');
    expect(b.branch).toBe('what-if-b');
    expect(new Set(seen.a)).toEqual(new Set(['what-if-a']));
    expect(new Set(seen.b)).toEqual(new Set(['what-if-b']));
    expect(a.lastCheckpoint).toContain('what-if-a');
    expect(b.lastCheckpoint).toContain('what-if-b');
  });

  // Found by a review: the filter above dropped what a signal listener delivers into the run.
  it('hears a signal delivered to its run from outside its async context', async () => {
    const location = join(directory.path, 'cp');
    const failing = toolUsingModel({
      failOn: (call) => JSON.stringify(call.messages[0]).includes('Current task: Review'),
    });
    const { crew } = threeTaskCrew(failing, { checkpoint: { location } });
    await crew.kickoff({ inputs: { topic: 'AI' } }).catch(() => undefined);
    const registry = new ProjectRegistry().register({
      tools: { lookup: lookupTool },
      models: { 'offline:default': toolUsingModel() },
    });
    // Like a process signal listener: runs outside any continuation's async context.
    const outside = new AsyncResource('signal');
    let delivered = false;
    const stop = eventBus.onAny((_s: unknown, event: BaseEvent) => {
      // At a model call: the run's first events were emitted in the continuation's context.
      if (delivered || event.type !== 'llm_call_started') return;
      delivered = true;
      const run = Run.ofState(eventBus.currentState());
      outside.runInAsyncScope(() =>
        run!.emit({}, new SigIntEvent({ signal: 'SIGINT', signalNumber: 2, source: {} as never })),
      );
    });
    const seen: string[] = [];
    await continueFromCheckpoint({
      reference: location,
      mode: 'resume',
      registry,
      onEvent: (event) => seen.push(event.type),
    }).finally(stop);
    expect(delivered).toBe(true);
    expect(seen).toContain('SIGINT');
  });

  it('hears a signal the process delivers before its run emitted anything', async () => {
    const location = join(directory.path, 'cp');
    const failing = toolUsingModel({
      failOn: (call) => JSON.stringify(call.messages[0]).includes('Current task: Review'),
    });
    const { crew } = threeTaskCrew(failing, {
      checkpoint: { location, onEvents: ['task_completed', 'SIGHUP'] },
    });
    await crew.kickoff({ inputs: { topic: 'AI' } }).catch(() => undefined);
    // Another listener is present, so the runtime leaves the process running (as Node would).
    const keepAlive = () => undefined;
    process.on('SIGHUP', keepAlive);
    // The process's signal listener runs outside any continuation's async context.
    const outside = new AsyncResource('signal');
    const seen: string[] = [];
    let seenAtSignal: string[] | undefined;
    // The runtime listens for signals once the run has started: the signal comes right then.
    const onListener = (name: string | symbol) => {
      if (name !== 'SIGHUP' || seenAtSignal !== undefined) return;
      queueMicrotask(() =>
        outside.runInAsyncScope(() => {
          seenAtSignal = [...seen];
          process.emit('SIGHUP', 'SIGHUP');
        }),
      );
    };
    process.on('newListener', onListener);
    try {
      await continueFromCheckpoint({
        reference: location,
        mode: 'resume',
        registry: registry(),
        onEvent: (event) => seen.push(event.type),
      });
    } finally {
      process.removeListener('newListener', onListener);
      process.removeListener('SIGHUP', keepAlive);
    }
    expect(seenAtSignal).toEqual([]);
    expect(seen).toContain('SIGHUP');
    expect(seen.indexOf('SIGHUP')).toBeLessThan(seen.indexOf('task_started'));
    const triggers = checkpointFiles(location).map((file) => readCheckpoint(file).metadata.trigger);
    expect(triggers).toContain('SIGHUP');
  });

  it('refuses an answer for a crew instead of ignoring it', async () => {
    const location = join(directory.path, 'cp');
    await interruptedRun(location);
    await expect(
      continueFromCheckpoint({
        reference: location,
        mode: 'resume',
        humanInput: 'yes',
        registry: registry(),
      }),
    ).rejects.toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/paused flow/) });
  });

  it('finds a checkpoint by id prefix in a default location', async () => {
    const location = join(directory.path, 'cp');
    await interruptedRun(location);
    const id = readCheckpoint(checkpointFiles(location)[1]!).metadata.id;
    const result = await continueFromCheckpoint({
      reference: id.slice(0, 22),
      defaultLocation: location,
      mode: 'fork',
      branch: 'by-prefix',
      registry: registry(),
    });
    expect(result.branch).toBe('by-prefix');
  });

  it('resumes a standalone agent', async () => {
    const location = join(directory.path, 'agent_cp');
    const failing = toolUsingModel({
      failOn: (call) => call.messages.some((message) => message.role === 'tool'),
    });
    const agent = new Agent({
      role: 'Scout',
      goal: 'Find facts',
      backstory: 'Curious',
      llm: failing,
      tools: [lookupTool],
      checkpoint: { location, onEvents: ['tool_usage_finished'] },
    });
    await expect(agent.kickoff('Find three facts about tides')).rejects.toThrow();
    const result = await continueFromCheckpoint({
      reference: location,
      mode: 'resume',
      registry: registry(),
    });
    expect(result.kind).toBe('agent');
    expect(result.name).toBe('Scout');
    expect(result.output).toContain('[offline model]');
  });
});

describe('loadProjectConfig', () => {
  it('registers what crewline.config.mjs exports', async () => {
    writeFileSync(
      join(directory.path, 'crewline.config.mjs'),
      "export default { models: { 'team-model': () => 'offline:team' } };\n",
    );
    const config = await loadProjectConfig({ cwd: directory.path });
    expect(Object.keys(config?.models ?? {})).toEqual(['team-model']);
    expect(projectRegistry().models['team-model']).toBeTypeOf('function');
  });

  it('unwraps a config compiled to CommonJS (exports.default next to __esModule)', async () => {
    writeFileSync(join(directory.path, 'package.json'), '{ "type": "commonjs" }\n');
    writeFileSync(
      join(directory.path, 'crewline.config.js'),
      [
        '"use strict";',
        'Object.defineProperty(exports, "__esModule", { value: true });',
        "exports.default = { models: { 'compiled-model': () => 'offline:compiled' } };",
        '',
      ].join('\n'),
    );
    // What Node's import() of CommonJS gives: a namespace whose default is module.exports (vitest's
    // own import() unwraps __esModule by itself, so the file is loaded with Node's require here).
    const nodeRequire = createRequire(import.meta.url);
    const config = await loadProjectConfig({
      cwd: directory.path,
      importModule: async (path) => {
        const exports = nodeRequire(path) as Record<string, unknown>;
        return { ...exports, default: exports };
      },
    });
    expect(Object.keys(config?.models ?? {})).toEqual(['compiled-model']);
    expect(projectRegistry().models['compiled-model']).toBeTypeOf('function');
  });

  it('returns undefined without a config file and names a broken one', async () => {
    expect(await loadProjectConfig({ cwd: directory.path })).toBeUndefined();
    writeFileSync(join(directory.path, 'crewline.config.mjs'), 'export const nothing = 1;\n');
    await expect(loadProjectConfig({ cwd: directory.path })).rejects.toThrow(/default export/);
  });
});
