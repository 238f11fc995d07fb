// A third-party checkpoint provider given to registerProject is used for the whole process, as its
// models, tools and flows are: a project whose crewline.config.ts lists `providers: [kvEntry()]` and
// whose code calls `registerProject(config)` checkpoints to `kv://runs` without building a registry.
// Before, the run failed with "no checkpoint provider claims "kv://runs" ... add the provider's entry
// to providers in crewline.config.ts" — what the user had done.
import type { ProviderEntry } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { registerProject } from './project-config.js';

/** A provider kind of its own (`kv://` locations), the one instance its entry makes counted. */
function kvEntry(): ProviderEntry & { made: InMemoryProvider[] } {
  const made: InMemoryProvider[] = [];
  return {
    name: 'kv',
    made,
    claims: (reference) => reference.startsWith('kv://'),
    create: () => {
      const provider = Object.assign(new InMemoryProvider(), { kind: 'kv' });
      made.push(provider);
      return provider;
    },
  };
}

function crewAt(location: string): Crew {
  const agent = new Agent({
    role: 'Researcher',
    goal: 'Research',
    backstory: 'Careful',
    llm: offlineModel({ name: 'researcher' }),
  });
  return new Crew({
    agents: [agent],
    tasks: [new Task({ description: 'look it up', expectedOutput: 'notes', agent })],
    checkpoint: { location },
  });
}

describe('registerProject({ providers })', () => {
  it('lets a run checkpoint to a location the registered entry claims, and resume from it', async () => {
    const entry = kvEntry();
    registerProject({ providers: [entry] });
    await crewAt('kv://runs').kickoff();
    expect(entry.made).toHaveLength(1);
    const stored = await entry.made[0]!.list('kv://runs');
    expect(stored.length).toBeGreaterThan(0);

    // Read back through the same shared provider: no second instance, no registry passed.
    const restored = await Crew.fromCheckpoint({ restoreFrom: 'kv://runs' });
    await restored.kickoff();
    expect(entry.made).toHaveLength(1);
  });

  it('a location nobody claims says how to register its provider in code, not only in crewline.config.ts', async () => {
    const error = await (async () => crewAt('vault://runs').kickoff())().catch((thrown: unknown) => thrown);
    const message = (error as Error).message;
    expect(message).toContain(
      'no checkpoint provider claims "vault://runs" (registered: postgres, sqlite, kv, json)',
    );
    expect(message).toContain('registerProject({ providers: [entry] })');
  });
});
