import {
  type BaseEvent,
  CheckpointCompletedEvent,
  CheckpointStartedEvent,
  CrewlineError,
  EventBus,
  type EventRecord,
  TaskCompletedEvent,
} from '@crewline/events';
import { describe, expect, it, vi } from 'vitest';
import { validateDocument } from './document.js';
import { parseDocumentText } from './document-text.js';
import type { CheckpointProvider } from './provider.js';
import { createProviderRegistry, providerEntryOf } from './provider-registry.js';
import { readDocument, resolveReference } from './reference.js';
import { RuntimeState } from './runtime-state.js';
import { FakeCrew } from './test-support/fake-crew.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

function setup() {
  const bus = new EventBus();
  const provider = new InMemoryProvider();
  const crew = new FakeCrew(2);
  const state = new RuntimeState({
    provider,
    location: 'mem',
    entities: [crew],
    inputs: { topic: 'AI' },
    bus,
  });
  return { bus, provider, crew, state };
}

describe('RuntimeState', () => {
  it('records events with sequence numbers and writes them with entities and inputs', async () => {
    const { bus, provider, crew, state } = setup();
    bus.runInScope(state, () => {
      bus.emit(crew, new TaskCompletedEvent({ description: 'Research', output: 'bullets' }));
    });
    crew.outputs[0] = 'bullets';
    const reference = state.checkpoint();
    const document = await readDocument(provider, 'mem', reference.split('#')[1]!);
    expect(document.events.map((event: EventRecord) => [event.type, event.sequence])).toEqual([
      ['task_completed', 1],
    ]);
    expect(document.metadata).toMatchObject({
      parentId: null,
      branch: 'main',
      trigger: 'manual',
      eventCount: 1,
    });
    expect(document.metadata.entities[0]).toMatchObject({ completed: 1, total: 2 });
    expect(document.inputs.json).toEqual({ topic: 'AI' });
  });

  it('a continuation sorts after its parent even when the parent was made by a clock ahead of ours', async () => {
    // Machine A (clock 3 s ahead) wrote P; machine B continued it and wrote C, whose id sorted before
    // P's: P stayed the lineage's head (its newest id) and a third process was granted it again.
    const ahead = new Date(Date.now() + 3_000).toISOString().replace(/[-:Z]/g, '').replace('.', '');
    const parentId = `${ahead}-40000000`;
    const provider = new InMemoryProvider();
    const state = new RuntimeState({
      provider,
      location: 'mem',
      entities: [new FakeCrew(2)],
      lineage: { lineageId: 'run-ahead', checkpointId: parentId, branch: 'main' },
    });
    state.checkpoint();
    const [child] = await provider.list('mem');
    expect(child!.parentId).toBe(parentId);
    expect(child!.id > parentId).toBe(true);
  });

  it('chains parents across writes and keeps the lineage', async () => {
    const { provider, state } = setup();
    expect(state.lastStored).toBeUndefined();
    const first = state.checkpoint();
    expect(state.lastStored?.reference).toBe(first);
    const second = await state.acheckpoint();
    const listed = await provider.list('mem');
    expect(listed.map((entry) => entry.reference)).toEqual([first, second]);
    expect(state.lastStored).toMatchObject({
      reference: second,
      id: listed[1]?.id,
      parentId: listed[0]?.id,
      lineageId: state.lineage.lineageId,
      branch: 'main',
    });
    expect(listed[1]?.parentId).toBe(listed[0]?.id);
    expect(listed[0]?.lineageId).toBe(listed[1]?.lineageId);
  });

  it('forks onto a new branch and lineage whose first write names the restored checkpoint', async () => {
    const { provider, state, crew } = setup();
    const origin = state.checkpoint();
    const loaded = await resolveReference(origin, createProviderRegistry([providerEntryOf(provider)]));
    const document = await readDocument(provider, loaded.location, loaded.checkpoint.id);
    const restored = RuntimeState.fromDocument(document, { provider, location: 'mem', entities: [crew] });
    expect(restored.inputs).toEqual({ topic: 'AI' });
    const branch = restored.fork();
    expect(branch).toMatch(/^fork\/.{8}-[0-9a-f]{6}$/);
    restored.checkpoint();
    const forked = await provider.list('mem', { branch });
    expect(forked).toHaveLength(1);
    expect(forked[0]?.parentId).toBe(loaded.checkpoint.id);
    expect(forked[0]?.lineageId).not.toBe(loaded.checkpoint.lineageId);
    expect(await provider.list('mem', { branch: 'main' })).toHaveLength(1);
    expect(() => restored.fork('../escape')).toThrow(/not allowed/);
  });

  it('throws on a failed manual write and does not advance the lineage', async () => {
    const failing: CheckpointProvider = {
      ...new InMemoryProvider(),
      kind: 'broken',
      contractVersion: 1,
      capabilities: { syncWrite: true, incremental: false, leases: false },
      resolveLocation: (location) => location,
      parseReference: () => undefined,
      writeSync: () => {
        throw new CrewlineError('test', 'write_failed', 'disk full');
      },
      write: async () => {
        throw new CrewlineError('test', 'write_failed', 'disk full');
      },
      read: async () => ({ text: '' }),
      list: async () => [],
      latest: async () => undefined,
      prune: async () => ({ removed: [], dryRun: false }),
      delete: async () => false,
    };
    const state = new RuntimeState({ provider: failing, location: 'x', bus: new EventBus() });
    expect(() => state.checkpoint()).toThrow(/disk full/);
    await expect(state.acheckpoint()).rejects.toThrow(/disk full/);
    expect(state.lineage.checkpointId).toBeNull();
    expect(state.lastStored).toBeUndefined();
  });

  it('resolves the location it writes to once, and again for another location, provider or directory', async () => {
    class ResolvingProvider extends InMemoryProvider {
      resolved: string[] = [];
      constructor(readonly prefix: string) {
        super();
      }
      override resolveLocation(location: string): string {
        const resolved = `${this.prefix}${process.cwd()}/${location}`;
        this.resolved.push(resolved);
        return resolved;
      }
    }
    const provider = new ResolvingProvider('one:');
    const other = new ResolvingProvider('two:');
    const state = new RuntimeState({ provider, location: 'a', bus: new EventBus() });
    const cwd = process.cwd();
    for (let index = 0; index < 3; index += 1) state.writeCheckpointSync({ location: 'a' });
    expect(provider.resolved).toEqual([`one:${cwd}/a`]);
    state.writeCheckpointSync({ location: 'b' });
    state.writeCheckpointSync({ location: 'b', provider: other });
    expect(await provider.list(`one:${cwd}/b`)).toHaveLength(1);
    expect(await other.list(`two:${cwd}/b`)).toHaveLength(1);
    const moved = vi.spyOn(process, 'cwd').mockReturnValue('/moved');
    try {
      state.writeCheckpointSync({ location: 'b', provider: other });
    } finally {
      moved.mockRestore();
    }
    expect(await other.list('two:/moved/b')).toHaveLength(1);
    expect(await provider.list(`one:${cwd}/a`)).toHaveLength(3);
  });

  it('refuses a lineage id that could escape a path or break a line', () => {
    for (const lineageId of ['../up', 'a/b', 'nul\u0000', 'two\nlines'])
      expect(() => new RuntimeState({ lineage: { lineageId } }), lineageId).toThrow(
        /lineage id .* is not allowed/,
      );
  });

  it("prunes to maxCheckpoints within the run's own lineage after writes", async () => {
    const { provider, state } = setup();
    expect(state.hasPendingWork).toBe(false);
    for (let index = 0; index < 5; index += 1) state.writeCheckpointSync({ maxCheckpoints: 2 });
    expect(state.hasPendingWork).toBe(true); // the prunes
    await state.settle();
    expect(state.hasPendingWork).toBe(false);
    expect(await provider.list('mem')).toHaveLength(2);
  });

  it('never writes a planted key from inputs, entities or events', async () => {
    const key = `sk-proj-${'Qw3'.repeat(14)}`;
    const { bus, provider, state } = setup();
    state.inputs = { apiKey: key, note: `key=${key}` };
    bus.runInScope(state, () =>
      bus.emit(null, new TaskCompletedEvent({ description: key, output: `Bearer ${key}` })),
    );
    const reference = state.checkpoint();
    const raw = await provider.read('mem', reference.split('#')[1]!);
    const text = 'text' in raw ? raw.text : '';
    expect(text).not.toContain(key);
    expect(validateDocument(parseDocumentText(text)).events).toHaveLength(1);
  });
});

describe('RuntimeState checkpoint lifecycle events', () => {
  it('gives listeners of checkpoint_started and checkpoint_completed every field', () => {
    const { bus, state } = setup();
    const seen: BaseEvent[] = [];
    bus.on(
      CheckpointStartedEvent,
      (_source: unknown, event: CheckpointStartedEvent) => void seen.push(event),
    );
    bus.on(CheckpointCompletedEvent, (_source: unknown, event: CheckpointCompletedEvent) => {
      seen.push(event);
    });
    const first = state.checkpoint();
    const second = state.checkpoint();
    const [started, completed] = seen as [CheckpointStartedEvent, CheckpointCompletedEvent];
    expect(seen.map((event) => event.type)).toEqual([
      'checkpoint_started',
      'checkpoint_completed',
      'checkpoint_started',
      'checkpoint_completed',
    ]);
    expect(started.payload()).toEqual({
      location: 'mem',
      provider: 'memory',
      trigger: 'manual',
      branch: 'main',
      parentId: null,
    });
    expect(Object.keys(completed.payload()).sort()).toEqual(
      [
        'branch',
        'checkpointId',
        'durationMs',
        'location',
        'parentId',
        'provider',
        'reference',
        'trigger',
      ].sort(),
    );
    expect(completed).toMatchObject({ reference: first, parentId: null, trigger: 'manual' });
    expect(seen[3]).toMatchObject({ reference: second, parentId: completed.checkpointId });
    expect(started.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(started.timestamp).toISOString()).toBe(started.timestamp);
  });

  it('does not build lifecycle events when no handler would receive them', () => {
    const { bus, state } = setup();
    const emitted: string[] = [];
    const emit = bus.emit.bind(bus);
    bus.emit = (source, event, runState) => {
      emitted.push(event.type);
      return emit(source, event, runState);
    };
    const received: string[] = [];
    bus.onAny((_source: unknown, event: BaseEvent) => void received.push(event.type), {
      except: ['checkpoint_started', 'checkpoint_completed'],
    });
    state.checkpoint();
    expect(emitted).toEqual([]);
    const off = bus.on(CheckpointCompletedEvent, () => undefined);
    state.checkpoint();
    expect(emitted).toEqual(['checkpoint_completed']);
    off();
    expect(received).toEqual([]);
  });

  it('still emits them on a bus of an older @crewline/events copy, which has no wants()', () => {
    const { bus, state } = setup();
    // An older copy's bus: the method is missing (copies share the bus on a globalThis symbol).
    Object.defineProperty(bus, 'wants', { value: undefined });
    const received: string[] = [];
    bus.onAny((_source: unknown, event: BaseEvent) => void received.push(event.type));
    state.checkpoint();
    expect(received).toEqual(['checkpoint_started', 'checkpoint_completed']);
  });
});
