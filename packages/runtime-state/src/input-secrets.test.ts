import { CrewKickoffStartedEvent, EventBus, REDACTED, TaskStartedEvent } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import type { EntitySnapshot, EntitySummary } from './document.js';
import type { CheckpointWrite, StoredCheckpoint } from './provider.js';
import type { CheckpointableEntity } from './run-entities.js';
import { RuntimeState } from './runtime-state.js';
import type { SettledValues } from './settled-values.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

/** A provider that keeps every write it was given, as well as storing it. */
class KeepingProvider extends InMemoryProvider {
  readonly writes: CheckpointWrite[] = [];
  override writeSync(location: string, write: CheckpointWrite): StoredCheckpoint {
    this.writes.push(write);
    return super.writeSync(location, write);
  }
}

/** A crew-like entity whose completed task (settled: redacted once, kept) quotes a rendered prompt. */
class RenderingCrew implements CheckpointableEntity {
  readonly entityKind = 'crew' as const;
  readonly entityId = 'crew-1';
  readonly entityName = 'weather';
  readonly completed: { description: string }[] = [];

  snapshotEntity(settled?: SettledValues): EntitySnapshot {
    const tasks = this.completed.map((task) => settled?.settle(task) ?? task);
    return { kind: 'crew', id: this.entityId, name: this.entityName, data: { tasks } };
  }

  summarizeEntity(): EntitySummary {
    return { kind: 'crew', id: this.entityId, name: this.entityName, completed: 0, total: 1 };
  }
}

// Keys of no known shape: only the name of the input that holds them says they are credentials.
// Each test plants its own (the registry is process-wide).
let planted = 0;
function plantedKey(): string {
  planted += 1;
  return `wx-9Tb4Qn${planted}Vr6Jm2Ks`;
}

function run(inputs: Record<string, unknown>) {
  const provider = new KeepingProvider();
  const crew = new RenderingCrew();
  const state = new RuntimeState({
    provider,
    location: 'mem',
    inputs,
    entities: [crew],
    bus: new EventBus(),
  });
  return { provider, crew, state };
}

/** Every document the provider was given, as text. */
function written(provider: KeepingProvider): string {
  return JSON.stringify(provider.writes.map((write) => write.document));
}

describe('kickoff inputs redacted by their name', () => {
  it('are redacted by value from the run start: in events and entities, not only under their name', () => {
    const apiKey = plantedKey();
    const { provider, crew, state } = run({
      apiKey,
      city: 'Oslo',
      nested: { auth: { secret: `${apiKey}x` } },
    });
    const description = `Call the weather service with key ${apiKey} for Oslo`;
    state.recordEvent(new TaskStartedEvent({ description }));
    crew.completed.push({ description });
    state.checkpoint();
    const text = written(provider);
    expect(text).not.toContain(apiKey);
    expect(text).toContain(`Call the weather service with key ${REDACTED} for Oslo`);
    // What the run holds in memory is the caller's: only what is written is redacted.
    expect(state.inputs.apiKey).toBe(apiKey);
  });

  it('a value set in the inputs during the run is redacted from that checkpoint on, settled parts included', () => {
    const { provider, crew, state } = run({ apiKey: 'not-set-yet', city: 'Oslo' });
    state.checkpoint();
    const rotated = plantedKey();
    // Settled before anyone knew it was a credential: kept redacted under the old rules.
    crew.completed.push({ description: `Call with key ${rotated}` });
    state.checkpoint();
    expect(JSON.stringify(provider.writes.at(-1)!.document)).toContain(rotated);
    state.inputs.apiKey = rotated;
    state.checkpoint();
    const last = JSON.stringify(provider.writes.at(-1)!.document);
    expect(last).not.toContain(rotated);
    expect(last).toContain(`Call with key ${REDACTED}`);
  });

  it('inputs a crew kicked off inside the run brings are redacted by value before its tasks are recorded', () => {
    const { provider, state } = run({ topic: 'weather' });
    const apiKey = plantedKey();
    state.recordEvent(new CrewKickoffStartedEvent({ crewName: 'inner', inputs: { apiKey } }));
    state.recordEvent(new TaskStartedEvent({ description: `Call with key ${apiKey}` }));
    state.checkpoint();
    expect(written(provider)).not.toContain(apiKey);
  });

  it('values too short or too plain to redact by value stay in other text', () => {
    const { provider, crew, state } = run({ token: 'Oslo', password: '12345678', city: 'Oslo' });
    crew.completed.push({ description: 'Weather for Oslo, code 12345678' });
    state.checkpoint();
    expect(written(provider)).toContain('Weather for Oslo, code 12345678');
  });
});
