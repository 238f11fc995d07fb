import {
  CrewKickoffStartedEvent,
  EventBus,
  REDACTED,
  redactionGeneration,
  TaskStartedEvent,
} from '@crewline/events';
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

// Passwords of no known shape, each test its own: only the address written around them says they are
// credentials, and an answer or tool result quoting one bare has no address around it.
function plantedPassword(): string {
  planted += 1;
  return `hunter${planted}Qz7pass`;
}

describe('passwords of addresses given as kickoff inputs, under any name', () => {
  it('are redacted by value: a bare password quoted elsewhere is not written', () => {
    const password = plantedPassword();
    const { provider, crew, state } = run({
      topic: 'AI',
      db: `postgres://admin:${password}@db.internal:5432/app`,
    });
    state.recordEvent(
      new TaskStartedEvent({
        description: `Research AI with postgres://admin:${password}@db.internal:5432/app`,
      }),
    );
    crew.completed.push({ description: `The database password is ${password}.` });
    state.checkpoint();
    const text = written(provider);
    expect(text).not.toContain(password);
    expect(text).toContain(`The database password is ${REDACTED}.`);
    expect(text).toContain(`postgres://admin:${REDACTED}@db.internal:5432/app`);
    // What the run holds in memory is the caller's: only what is written is redacted.
    expect(state.inputs.db).toBe(`postgres://admin:${password}@db.internal:5432/app`);
  });

  it('in nested values and arrays, in the query and JDBC forms, URL-encoded ones by their decoded value too', () => {
    const query = plantedPassword();
    const jdbc = plantedPassword();
    const oracle = plantedPassword();
    const encoded = `${plantedPassword()}@1`;
    const { provider, crew, state } = run({
      services: {
        primary: { location: `postgres://db:5432/app?password=${query}` },
        replicas: [`jdbc:mysql://svc:${jdbc}@replica/app`, `jdbc:oracle:thin:svc/${oracle}@db:1521/svc`],
      },
      cache: `redis://default:${encodeURIComponent(encoded)}@cache:6379`,
    });
    crew.completed.push({ description: `Passwords: ${query}, ${jdbc}, ${oracle} and ${encoded}` });
    state.checkpoint();
    const text = written(provider);
    for (const password of [query, jdbc, oracle, encoded]) expect(text, password).not.toContain(password);
  });

  it('given on a resume or fork (new inputs), in a crew kicked off inside the run, or set during the run', () => {
    const { provider, crew, state } = run({ topic: 'AI' });
    state.checkpoint();
    const document = provider.writes.at(-1)!.document;

    const given = plantedPassword();
    const fork = RuntimeState.fromDocument(document, {
      provider,
      location: 'mem',
      inputs: { topic: 'AI', warehouse: `mysql://etl:${given}@warehouse/sales` },
      bus: new EventBus(),
    });
    fork.recordEvent(new TaskStartedEvent({ description: `Load with password ${given}` }));
    fork.checkpoint();
    expect(JSON.stringify(provider.writes.at(-1)!.document)).not.toContain(given);

    const nested = plantedPassword();
    state.recordEvent(
      new CrewKickoffStartedEvent({ crewName: 'inner', inputs: { db: `postgres://app:${nested}@db/app` } }),
    );
    state.recordEvent(new TaskStartedEvent({ description: `Connect with ${nested}` }));
    // Set during the run: registered as the next checkpoint stores the inputs (events recorded before
    // then keep what they were given), and what the run keeps redacted is scanned again.
    const changed = plantedPassword();
    crew.completed.push({ description: `Connect with ${changed}` });
    state.inputs.db = `postgres://app:${changed}@db/app`;
    state.checkpoint();
    const last = JSON.stringify(provider.writes.at(-1)!.document);
    expect(last).not.toContain(nested);
    expect(last).not.toContain(changed);
  });

  it('a password too short, a placeholder, or a word the address itself shows stays in other text', () => {
    const generation = redactionGeneration();
    const { provider, crew, state } = run({
      short: 'postgres://app:s3cr3t@db/app',
      placeholder: 'postgres://app:postgres@db/app',
      sameAsUser: 'postgres://analytics:analytics@db/analytics',
      sameAsDatabase: 'mysql://etl:warehouse@db/warehouse',
      // An input restored from a checkpoint: its password is no value to register.
      restored: `postgres://admin:${REDACTED}@db/app`,
      plain: 'https://example.com/docs?page=2',
    });
    crew.completed.push({ description: 'Ask s3cr3t about the analytics warehouse on postgres' });
    state.checkpoint();
    expect(written(provider)).toContain('Ask s3cr3t about the analytics warehouse on postgres');
    expect(redactionGeneration()).toBe(generation);
  });
});
