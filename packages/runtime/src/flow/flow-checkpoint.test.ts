import { type BaseEvent, EventBus } from '@crewline/events';
import { readDocument, type StoredCheckpoint } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureLogs, type LogCapture } from '../testing/capture-logs.js';
import { Flow, type FlowResult, start } from './index.js';
import { CycleFlow, executions, JoinFlow, LinearFlow, LoopFlow, PassFlow } from './test-support/scenarios.js';

type ScenarioClass =
  | typeof LinearFlow
  | typeof JoinFlow
  | typeof CycleFlow
  | typeof LoopFlow
  | typeof PassFlow;

const olderWarning = 'is not the latest of its run';
let logs: LogCapture;

beforeEach(() => {
  logs = captureLogs();
});

afterEach(() => {
  executions.length = 0;
  logs.stop();
});

function countBy(items: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[item] = (counts[item] ?? 0) + 1;
  return counts;
}

function withoutId(state: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, ...rest } = state;
  return rest;
}

async function savedCallCounts(
  provider: InMemoryProvider,
  checkpoint: StoredCheckpoint,
): Promise<Record<string, number>> {
  const document = await readDocument(provider, 'mem', checkpoint.id);
  const flow = document.entities.find((entity) => entity.kind === 'flow');
  const execution = flow?.data.execution as { callCounts: [string, number][] };
  return Object.fromEntries(execution.callCounts);
}

describe.each([
  ['LinearFlow', LinearFlow],
  ['JoinFlow', JoinFlow],
  ['CycleFlow', CycleFlow],
  ['LoopFlow', LoopFlow],
  ['PassFlow', PassFlow],
] as [string, ScenarioClass][])('%s resumed from every checkpoint of a "*" run', (_name, Scenario) => {
  it('ends like the uninterrupted run and re-runs only what had not completed', async () => {
    const provider = new InMemoryProvider();
    const flow = new Scenario({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    });
    const uninterrupted = (await flow.kickoff()) as FlowResult<Record<string, unknown>>;
    const fullCounts = countBy(executions);
    const checkpoints = await provider.list('mem');
    expect(checkpoints.length).toBeGreaterThan(5);
    expect(new Set(checkpoints.map((checkpoint) => checkpoint.trigger))).toContain(
      'method_execution_finished',
    );

    // Resuming any checkpoint but the run's last one continues on a new branch, with a warning.
    const parents = new Set(checkpoints.map((checkpoint) => checkpoint.parentId));
    for (const checkpoint of checkpoints) {
      executions.length = 0;
      const logged = logs.records.length;
      const bus = new EventBus();
      const types: string[] = [];
      bus.onAny((_source: unknown, event: BaseEvent) => {
        types.push(event.type);
      });
      const restored = await (Scenario as typeof LinearFlow).fromCheckpoint(
        { restoreFrom: `mem#${checkpoint.id}`, provider },
        { bus },
      );
      expect(restored).toBeInstanceOf(Scenario);
      const resumed = (await restored.kickoff()) as FlowResult<Record<string, unknown>>;
      const context = `resumed from ${checkpoint.trigger} (${checkpoint.id})`;
      const warned = logs.records.slice(logged).some((record) => record.message.includes(olderWarning));
      expect(warned, context).toBe(parents.has(checkpoint.id));
      expect(resumed.status, context).toBe('completed');
      expect(resumed.stateId, context).toBe(uninterrupted.stateId);
      expect(withoutId(resumed.state), context).toEqual(withoutId(uninterrupted.state));
      expect(resumed.output, context).toEqual(uninterrupted.output);
      expect(types, context).not.toContain('flow_started');
      const saved = await savedCallCounts(provider, checkpoint);
      const expected: Record<string, number> = {};
      for (const [method, count] of Object.entries(fullCounts)) {
        const remaining = count - (saved[method] ?? 0);
        if (remaining > 0) expected[method] = remaining;
      }
      expect(countBy(executions), context).toEqual(expected);
    }
    logs.expect(olderWarning);
  });
});

describe('fork and fromCheckpoint', () => {
  it('forks onto a new branch with a new state id and never writes to the original branch', async () => {
    const provider = new InMemoryProvider();
    const flow = new CycleFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    });
    const original = await flow.kickoff();
    const before = await provider.list('mem', { branch: 'main' });
    const forkPoint = before[2] as StoredCheckpoint;
    const forked = await CycleFlow.fork(
      { restoreFrom: `mem#${forkPoint.id}`, provider },
      { branch: 'experiment', bus: new EventBus() },
    );
    expect(forked).toBeInstanceOf(CycleFlow);
    expect(forked.state.id).not.toBe(original.stateId);
    const result = await forked.kickoff({ inputs: { target: 4 } });
    expect(result.stateId).toBe(forked.state.id);
    expect(result.state.round).toBe(4);
    const after = await provider.list('mem', { branch: 'main' });
    expect(after.map((checkpoint) => checkpoint.id)).toEqual(before.map((checkpoint) => checkpoint.id));
    const branch = await provider.list('mem', { branch: 'experiment' });
    expect(branch.length).toBeGreaterThan(0);
    expect(branch[0]?.parentId).toBe(forkPoint.id);
    expect(branch.every((checkpoint) => checkpoint.entities[0]?.id === result.stateId)).toBe(true);
    expect(branch[0]?.lineageId).not.toBe(forkPoint.lineageId);
  });

  it('restores through kickoff({ fromCheckpoint }) and refuses a checkpoint of another flow', async () => {
    const provider = new InMemoryProvider();
    await new LinearFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    const first = (await provider.list('mem'))[0] as StoredCheckpoint;
    executions.length = 0;
    const flow = new LinearFlow({ bus: new EventBus(), checkpoint: { location: 'mem', provider } });
    const result = await flow.kickoff({ fromCheckpoint: { restoreFrom: `mem#${first.id}`, provider } });
    expect(executions).toEqual(['clean', 'publish']);
    expect(result.state.total).toBe(13);
    // The run went on past its first checkpoint, so continuing that one forks (SPEC §4).
    expect(logs.expect(olderWarning)).toHaveLength(1);
    const again = await LinearFlow.fromCheckpoint(
      { restoreFrom: `mem#${first.id}`, provider },
      { bus: new EventBus() },
    );
    await expect(again.kickoff({ inputs: { id: 'someone-else' } })).rejects.toThrow(
      /cannot continue as "someone-else"/,
    );
    await expect(JoinFlow.fromCheckpoint({ restoreFrom: `mem#${first.id}`, provider })).rejects.toThrow(
      /holds flow "LinearFlow", not "JoinFlow"/,
    );
  });

  it('treats fromCheckpoint without restoreFrom as the checkpoint config of the kickoff, as a crew does', async () => {
    const provider = new InMemoryProvider();
    const flow = new LinearFlow({ bus: new EventBus() });
    await flow.kickoff({ fromCheckpoint: { location: 'mem', provider, onEvents: ['flow_finished'] } });
    const checkpoints = await provider.list('mem');
    expect(checkpoints.map((checkpoint) => checkpoint.trigger)).toEqual(['flow_finished']);
  });

  it('stores the flow as a checkpoint entity with state, methods, outputs, counts and pending work', async () => {
    const provider = new InMemoryProvider();
    await new LinearFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_started'] },
    }).kickoff();
    const checkpoints = await provider.list('mem');
    const second = checkpoints[1] as StoredCheckpoint;
    const document = await readDocument(provider, 'mem', second.id);
    const snapshot = document.entities[0];
    expect(snapshot?.kind).toBe('flow');
    expect(snapshot?.registryName).toBe('LinearFlow');
    const data = snapshot?.data as Record<string, any>;
    expect(data.state.json).toMatchObject({ trail: [], total: 1 });
    expect(data.execution.completedMethods).toEqual(['fetch']);
    expect(data.execution.methodOutputs).toEqual([{ method: 'fetch', output: { json: 'raw' } }]);
    expect(data.execution.callCounts).toEqual([['fetch', 1]]);
    expect(data.execution.pending).toMatchObject([{ method: 'clean', input: { json: 'raw' }, pause: null }]);
    expect(second.entities[0]).toMatchObject({
      kind: 'flow',
      name: 'LinearFlow',
      status: 'running',
      completed: 1,
      total: 3,
    });
  });

  it('gives a static flowName to events and checkpoints', async () => {
    class Named extends Flow {
      static flowName = 'named-flow';
      @start() only() {
        return 1;
      }
    }
    const provider = new InMemoryProvider();
    await new Named({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['flow_finished'] },
    }).kickoff();
    const [checkpoint] = await provider.list('mem');
    expect(checkpoint?.entities[0]?.name).toBe('named-flow');
  });
});
