import { join } from 'node:path';
import {
  type BaseEvent,
  CheckpointCompletedEvent,
  type CheckpointEventType,
  EventBus,
  type LogRecord,
  setLogSink,
  TaskCompletedEvent,
  ToolUsageFinishedEvent,
} from '@crewline/events';
import {
  type CheckpointableEntity,
  type CheckpointProvider,
  parseCheckpointConfig,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import {
  checkpointFiles,
  offlineModel,
  readCheckpoint,
  temporaryDirectory,
} from '../e2e/support/fixtures.js';
import { Task } from '../task/task.js';
import { Run } from './run.js';

function entity(name: string, kind: 'crew' | 'flow' | 'agent' = 'flow'): CheckpointableEntity {
  return {
    entityKind: kind,
    entityId: `${name}-id`,
    entityName: name,
    snapshotEntity: () => ({ kind, id: `${name}-id`, name, data: { value: name } }),
    summarizeEntity: () => ({ kind, id: `${name}-id`, name }),
  };
}

function config(onEvents: CheckpointEventType[], provider: CheckpointProvider, location = 'memory-location') {
  return { ...parseCheckpointConfig({ onEvents, location }), provider };
}

class FailingProvider extends InMemoryProvider {
  override writeSync(): StoredCheckpoint {
    throw new Error('disk full');
  }
}

let directory: { path: string; cleanup: () => void };
const logs: LogRecord[] = [];
beforeEach(() => {
  directory = temporaryDirectory();
  logs.length = 0;
  setLogSink((record) => void logs.push(record));
});
afterEach(() => {
  setLogSink(null);
  directory.cleanup();
});

describe('Run', () => {
  it('writes automatic checkpoints without building lifecycle events nobody listens for', async () => {
    const bus = new EventBus();
    const provider = new InMemoryProvider();
    const emitted: string[] = [];
    const emit = bus.emit.bind(bus);
    bus.emit = (source, event, state) => {
      emitted.push(event.type);
      return emit(source, event, state);
    };
    await Run.execute(
      { root: entity('flow'), config: config(['*'], provider), inputs: {}, bus },
      async (run) => {
        // The runtime's own listener is registered and excepts the lifecycle events.
        expect(bus.wants('checkpoint_started')).toBe(false);
        expect(bus.wants('task_completed')).toBe(true);
        run.emit(null, new TaskCompletedEvent({ description: 'd', output: 'o' }));
        const completed: string[] = [];
        const off = bus.on(CheckpointCompletedEvent, (_source: unknown, event: CheckpointCompletedEvent) => {
          completed.push(event.trigger);
        });
        run.emit(null, new TaskCompletedEvent({ description: 'd', output: 'o' }));
        off();
        expect(completed).toEqual(['task_completed']);
      },
    );
    expect(await provider.list('memory-location')).toHaveLength(2);
    expect(emitted).toEqual(['task_completed', 'task_completed', 'checkpoint_completed']);
  });

  it('writes a checkpoint for each subscribed event of the run, resolved through the event context', async () => {
    const bus = new EventBus();
    const provider = new InMemoryProvider();
    const agentProvider = new InMemoryProvider();
    await Run.execute(
      {
        root: entity('flow'),
        config: config(['task_completed', 'tool_usage_finished'], provider),
        inputs: {},
        bus,
      },
      async (run) => {
        run.setConfigFor('quiet-agent', null);
        run.setConfigFor('own-agent', config(['tool_usage_finished'], agentProvider, 'agent-location'));
        const completed = (agentId: string) =>
          new TaskCompletedEvent({ description: 'd', output: 'o', context: { agentId } });
        run.emit(null, completed('someone'));
        run.emit(null, completed('quiet-agent'));
        run.emit(null, completed('own-agent')); // its own config does not subscribe to task_completed
        run.emit(
          null,
          new ToolUsageFinishedEvent({
            toolName: 't',
            toolCallId: '1',
            result: 1,
            context: { agentId: 'own-agent' },
          }),
        );
        // Emitted through the bus from code in the run's scope (no explicit state): still this run's.
        bus.emit(null, new ToolUsageFinishedEvent({ toolName: 't', toolCallId: '2', result: 2 }));
      },
    );
    const root = await provider.list('memory-location');
    expect(root.map((entry) => entry.trigger)).toEqual(['task_completed', 'tool_usage_finished']);
    const own = await agentProvider.list('agent-location');
    expect(own.map((entry) => entry.trigger)).toEqual(['tool_usage_finished']);
    // One lineage across locations, and a chain in each: a checkpoint names a parent its location holds.
    expect(own[0]!.lineageId).toBe(root[0]!.lineageId);
    expect(own[0]!.parentId).toBeNull();
    expect(root[1]!.parentId).toBe(root[0]!.id);
  });

  it('ignores events outside any run and of other runs', async () => {
    const bus = new EventBus();
    const provider = new InMemoryProvider();
    bus.emit(null, new TaskCompletedEvent({ description: 'd', output: 'o' }));
    await Promise.all([
      Run.execute(
        { root: entity('a'), config: config(['task_completed'], provider, 'a'), inputs: {}, bus },
        async (run) => {
          run.emit(null, new TaskCompletedEvent({ description: 'd', output: 'o' }));
        },
      ),
      Run.execute({ root: entity('b'), config: undefined, inputs: {}, bus }, async (run) => {
        run.emit(null, new TaskCompletedEvent({ description: 'd', output: 'o' }));
      }),
    ]);
    expect(await provider.list('a')).toHaveLength(1);
  });

  it('joins an active run instead of starting a second one', async () => {
    const bus = new EventBus();
    const provider = new InMemoryProvider();
    await Run.execute(
      { root: entity('flow'), config: config(['task_completed'], provider), inputs: {}, bus },
      async (outer) => {
        await Run.execute(
          { root: entity('inner', 'crew'), config: undefined, inputs: {}, bus },
          async (inner) => {
            expect(inner).toBe(outer);
            inner.emit(null, new TaskCompletedEvent({ description: 'd', output: 'o' }));
          },
        );
      },
    );
    const [stored] = await provider.list('memory-location');
    expect(stored!.entities.map((summary) => summary.name)).toEqual(['flow', 'inner']);
  });

  it('hands each saved nested snapshot out once, in creation order or by key', async () => {
    const bus = new EventBus();
    const provider = new InMemoryProvider();
    let reference = '';
    await Run.execute({ root: entity('flow'), config: undefined, inputs: {}, bus }, async (run) => {
      run.state.addEntity(entity('crew-x', 'crew'));
      run.state.addEntity({
        ...entity('crew-x', 'crew'),
        entityId: 'second',
        snapshotEntity: () => ({ kind: 'crew', id: 'second', name: 'crew-x', data: { restoreKey: 'k2' } }),
      });
      reference = run.state.writeCheckpointSync({ provider, location: 'memory-location' }).reference;
    });
    const { createProviderRegistry, loadCheckpoint, providerEntryOf } = await import(
      '@crewline/runtime-state'
    );
    const restored = await loadCheckpoint(reference, createProviderRegistry([providerEntryOf(provider)]));
    await Run.execute({ root: entity('flow'), config: undefined, inputs: {}, bus, restored }, async (run) => {
      expect(run.takeRestoredSnapshot('crew', 'crew-x', 'k2')?.id).toBe('second');
      expect(run.takeRestoredSnapshot('crew', 'crew-x')?.id).toBe('crew-x-id');
      expect(run.takeRestoredSnapshot('crew', 'crew-x')).toBeUndefined();
      expect(run.takeRestoredSnapshot('flow', 'flow')).toBeUndefined(); // the root's own snapshot
    });
  });

  it('automatic writes are best-effort: a failing provider is logged with the reason and the run finishes', async () => {
    const llm = offlineModel();
    const agent = new Agent({ role: 'A', goal: 'G', backstory: 'B', llm });
    const crew = new Crew({
      tasks: [new Task({ description: 'x', expectedOutput: 'y', agent })],
      checkpoint: { provider: new FailingProvider(), location: 'nowhere' },
    });
    const result = await crew.kickoff();
    expect(result.raw).toContain('[offline model]');
    const warning = logs.find((record) => record.message.includes('automatic checkpoint on task_completed'));
    expect(warning).toBeDefined();
    expect(String((warning!.error as Error).message)).toContain('disk full');
  });

  it('manual checkpoints throw on failure', async () => {
    const bus = new EventBus();
    const provider = new FailingProvider();
    await Run.execute(
      { root: entity('flow'), config: config(['task_completed'], provider), inputs: {}, bus },
      async (run) => {
        expect(() => run.state.writeCheckpointSync({ provider, location: 'x' })).toThrow('disk full');
        expect(() => run.state.checkpoint()).toThrow('disk full');
        await expect(run.state.acheckpoint()).rejects.toThrow('disk full');
      },
    );
  });

  it('prunes its own run to maxCheckpoints after each write, never another run in the same location', async () => {
    const location = join(directory.path, 'cp');
    const llm = offlineModel();
    const agent = new Agent({ role: 'A', goal: 'G', backstory: 'B', llm });
    const tasks = Array.from(
      { length: 5 },
      (_, index) => new Task({ description: `step ${index}`, expectedOutput: 'y', agent }),
    );
    await new Crew({ tasks, checkpoint: { location, maxCheckpoints: 2 } }).kickoff();
    const files = checkpointFiles(location);
    expect(files).toHaveLength(2);
    const tasksOf = (file: string) =>
      (readCheckpoint(file).entities[0]!.data.tasks as { status: string }[]).filter(
        (task) => task.status === 'completed',
      ).length;
    expect(files.map(tasksOf)).toEqual([4, 5]);
  });

  it("a run's maxCheckpoints leaves an unfinished run of another crew on the same branch whole", async () => {
    const location = join(directory.path, 'cp');
    const llm = offlineModel();
    const agent = new Agent({ role: 'A', goal: 'G', backstory: 'B', llm });
    const steps = (prefix: string, count: number) =>
      Array.from(
        { length: count },
        (_, index) => new Task({ description: `${prefix} ${index}`, expectedOutput: 'y', agent }),
      );
    // An unfinished run: 4 checkpoints on main, no retention (as a crash would leave it).
    const unfinished = new Crew({ name: 'Unfinished', tasks: steps('first', 4), checkpoint: { location } });
    await unfinished.kickoff();
    const before = checkpointFiles(location);
    expect(before).toHaveLength(4);
    // A second crew in the same location, same default branch, keeping 2 of its own.
    await new Crew({
      name: 'Second',
      tasks: steps('second', 5),
      checkpoint: { location, maxCheckpoints: 2 },
    }).kickoff();
    const after = checkpointFiles(location);
    for (const file of before) expect(after).toContain(file);
    expect(after).toHaveLength(4 + 2);
  });

  it('delivers a process signal to the active run and checkpoints when subscribed', async () => {
    const location = join(directory.path, 'cp');
    // Another listener is present, so the runtime leaves the process running (as Node would).
    const keepAlive = () => undefined;
    process.on('SIGHUP', keepAlive);
    try {
      const llm = offlineModel({ latencyMs: 150 });
      const agent = new Agent({ role: 'A', goal: 'G', backstory: 'B', llm });
      const events: BaseEvent[] = [];
      const bus = new EventBus();
      bus.onAny((_source: unknown, event: BaseEvent) => void events.push(event));
      const crew = new Crew({
        tasks: [new Task({ description: 'x', expectedOutput: 'y', agent })],
        checkpoint: { location, onEvents: ['SIGHUP'] },
      });
      const running = crew.kickoff({ bus });
      setTimeout(() => process.kill(process.pid, 'SIGHUP'), 50);
      await running;
      const files = checkpointFiles(location);
      expect(files).toHaveLength(1);
      const document = readCheckpoint(files[0]!);
      expect(document.metadata.trigger).toBe('SIGHUP');
      expect(events.map((event) => event.type)).toContain('SIGHUP');
      expect(process.listeners('SIGHUP')).toEqual([keepAlive]); // ours is gone once no run is active
    } finally {
      process.removeListener('SIGHUP', keepAlive);
    }
  });
});
