// A new-user trial: with crewline.config.ts listing a third-party provider entry, code that called
// registerProject(config) and checkpointed to a location only that entry claims was told to "add the
// provider's entry to providers in crewline.config.ts" — what it had done. The refusal says what the
// config's `providers` is for (the CLI) and how code passes them; passing them that way works.
import type { CheckpointProvider, ProviderEntry } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { providerRegistry } from '../checkpointing/provider-registry.js';
import { Crew } from '../crew/crew.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { registerProject } from './project-config.js';

function kvEntry(): ProviderEntry & { made: CheckpointProvider[] } {
  const made: CheckpointProvider[] = [];
  return {
    name: 'kv',
    claims: (reference: string) => reference.startsWith('kv://'),
    create: () => {
      const provider = Object.assign(new InMemoryProvider(), { kind: 'kv' });
      made.push(provider);
      return provider;
    },
    made,
  } as ProviderEntry & { made: CheckpointProvider[] };
}

const crewWith = (checkpoint: ConstructorParameters<typeof Crew>[0]['checkpoint']) =>
  new Crew({
    tasks: [
      new Task({
        description: 'note the tides',
        expectedOutput: 'a note',
        agent: new Agent({ role: 'A', goal: 'G', backstory: 'B', llm: offlineModel() }),
      }),
    ],
    checkpoint,
  });

describe('a third-party provider entry in code', () => {
  it('is refused with how code passes it when only registerProject was given the config', async () => {
    registerProject({ providers: [kvEntry()] });
    const refusal = await crewWith({ location: 'kv://runs' })
      .kickoff()
      .then(
        () => undefined,
        (error: unknown) => error as Error,
      );
    expect(refusal?.message).toContain('no checkpoint provider claims "kv://runs"');
    expect(refusal?.message).toContain('providerRegistry([entry])');
    expect(refusal?.message).toContain('is what the CLI reads');
  });

  it('is used when the checkpoint config names a registry that holds it', async () => {
    const entry = kvEntry();
    const providers = providerRegistry([entry]);
    await crewWith({ location: 'kv://runs', providers }).kickoff();
    expect(entry.made).toHaveLength(1);
    expect((await entry.made[0]!.list('kv://runs')).length).toBeGreaterThan(0);
    await providers.close();
  });
});
