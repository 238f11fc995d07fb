import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { SqliteProvider } from '@crewline/provider-sqlite';
import {
  type CheckpointProvider,
  type CheckpointWrite,
  type JsonObject,
  readDocument,
} from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { Flow, listen, router, start } from './index.js';
import { shareUnchanged } from './stored-flow-parts.js';

/** Records every write a provider receives (the document, its text then, and what the run settled). */
function recording<P extends CheckpointProvider>(
  provider: P,
): { provider: P; writes: CheckpointWrite[]; texts: string[] } {
  const writes: CheckpointWrite[] = [];
  const texts: string[] = [];
  const record = (checkpoint: CheckpointWrite) => {
    writes.push(checkpoint);
    texts.push(checkpoint.text());
  };
  // Automatic checkpoints reach the provider one by one (writeSync, write) or in groups (writeBatch).
  const writeSync = provider.writeSync?.bind(provider);
  if (writeSync)
    provider.writeSync = (location, checkpoint) => {
      record(checkpoint);
      return writeSync(location, checkpoint);
    };
  const write = provider.write.bind(provider);
  provider.write = (location, checkpoint) => {
    record(checkpoint);
    return write(location, checkpoint);
  };
  const writeBatch = provider.writeBatch?.bind(provider);
  if (writeBatch)
    provider.writeBatch = (location, checkpoints) => {
      for (const checkpoint of checkpoints) record(checkpoint);
      return writeBatch(location, checkpoints);
    };
  return { provider, writes, texts };
}

const model = offlineModel({ name: 'stored-parts', responseBytes: 600 });

class ReportFlow extends Flow<{ sections: string[][] }> {
  initialState = { sections: [] as string[][] };

  async section(topic: string) {
    const agent = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Clear', llm: model });
    const crew = new Crew({
      agents: [agent],
      tasks: [
        new Task({ description: 'Outline {topic}', expectedOutput: 'outline', agent }),
        new Task({ description: 'Write {topic}', expectedOutput: 'text', agent }),
      ],
    });
    const output = await crew.kickoff({ inputs: { topic }, bus: this.bus });
    this.state.sections.push(output.tasksOutput.map((task) => task.raw));
    return { topic, text: output.raw };
  }

  @start() async tides() {
    return this.section('tides');
  }

  @listen('tides') async currents() {
    return this.section('currents');
  }
}

function flowData(write: CheckpointWrite): JsonObject {
  return write.document.entities.find((entity) => entity.kind === 'flow')!.data;
}

afterEach(() => model.reset());

describe('a flow stores its completed work once', () => {
  it('hands the same settled objects to every later write: method outputs, and the state where it did not change', async () => {
    const { provider, writes } = recording(new InMemoryProvider());
    await new ReportFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff();
    const afterFirst = writes.filter((write) => {
      const execution = flowData(write).execution as { completedMethods: string[] };
      return execution.completedMethods.length === 1;
    });
    const last = writes.at(-1)!;
    expect(afterFirst.length).toBeGreaterThan(5);
    const outputOf = (write: CheckpointWrite) =>
      (flowData(write).execution as { methodOutputs: { output: object }[] }).methodOutputs[0]!.output;
    const stateOf = (write: CheckpointWrite) => flowData(write).state as { json: { sections: object[] } };
    for (const write of afterFirst) {
      expect(outputOf(write)).toBe(outputOf(afterFirst[0]!));
      expect(stateOf(write)).toBe(stateOf(afterFirst[0]!));
      expect((flowData(write).execution as { committedState: object }).committedState).toBe(stateOf(write));
      expect(write.settled?.has(outputOf(write))).toBe(true);
      expect(write.settled?.has(stateOf(write))).toBe(true);
    }
    // The second method changed the state: the section the first one wrote is still the same object.
    expect(stateOf(last)).not.toBe(stateOf(afterFirst[0]!));
    expect(stateOf(last).json.sections).toHaveLength(2);
    expect(stateOf(last).json.sections[0]).toBe(stateOf(afterFirst[0]!).json.sections[0]);
    expect(outputOf(last)).toBe(outputOf(afterFirst[0]!));
  });

  it('reads every checkpoint of a flow of crews back from SQLite exactly as it was written', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'crewline-stored-parts-'));
    const location = join(directory, 'flow.db');
    const { provider, writes, texts } = recording(new SqliteProvider());
    try {
      await new ReportFlow({
        bus: new EventBus(),
        checkpoint: { location, provider, onEvents: ['*'] },
      }).kickoff();
      expect(writes.length).toBeGreaterThan(20);
      for (const [index, write] of writes.entries()) {
        const stored = await provider.read(location, write.metadata.id);
        expect('text' in stored && stored.text, `checkpoint ${index} (${write.metadata.trigger})`).toBe(
          texts[index],
        );
      }
    } finally {
      await provider.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

const passes: string[] = [];

/** Returns the same array each pass of its loop, grown in place: its state list. */
class CollectFlow extends Flow<{ items: string[] }> {
  initialState = { items: [] as string[] };

  @start('again') collect() {
    passes.push('collect');
    this.state.items.push(`item${this.state.items.length + 1}`);
    return this.state.items;
  }

  @router('collect') check(items: string[]) {
    passes.push('check');
    return items.length < 3 ? 'again' : 'done';
  }

  @listen('done') finish() {
    passes.push('finish');
    return this.state.items.join(',');
  }
}

describe('a flow stores each value as it was returned', () => {
  it('stores an object returned again, changed in place, anew: a resume from any checkpoint ends the same', async () => {
    const provider = new InMemoryProvider();
    passes.length = 0;
    const uninterrupted = await new CollectFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    expect(uninterrupted.output).toBe('item1,item2,item3');
    expect(passes).toEqual(['collect', 'check', 'collect', 'check', 'collect', 'check', 'finish']);
    const checkpoints = await provider.list('mem');
    expect(checkpoints).toHaveLength(7);
    for (const [index, checkpoint] of checkpoints.entries()) {
      const document = await readDocument(provider, 'mem', checkpoint.id);
      const data = document.entities.find((entity) => entity.kind === 'flow')!.data;
      const execution = data.execution as {
        pending: { method: string; input: { json: unknown } | null }[];
        methodOutputs: { method: string; output: { json: unknown } }[];
      };
      const items = (data.state as { json: { items: string[] } }).json.items;
      // Every collect so far returned the state list: as stored, it is the list as of that return.
      const collected = execution.methodOutputs.find((entry) => entry.method === 'collect');
      expect(collected?.output.json, `checkpoint ${index}`).toEqual(items);
      const due = execution.pending.find((activation) => activation.method === 'check');
      if (due) expect(due.input?.json, `checkpoint ${index}`).toEqual(items);
      passes.length = 0;
      const restored = await CollectFlow.fromCheckpoint(
        { restoreFrom: checkpoint.reference, provider },
        { bus: new EventBus() },
      );
      const resumed = await restored.kickoff();
      expect(resumed.output, `checkpoint ${index}`).toBe(uninterrupted.output);
      expect(passes, `checkpoint ${index}`).toHaveLength(6 - index);
    }
  });
});

describe('shareUnchanged', () => {
  it('keeps the previous subtrees that are equal, in the same key order, and nothing else', () => {
    const previous = { json: { a: [1, { b: 'x' }], c: { d: 1 }, e: 'same' } };
    const next = { json: { a: [1, { b: 'x' }, 3], c: { d: 2 }, e: 'same' } };
    const shared = shareUnchanged(next, previous) as typeof next;
    expect(shared).toEqual(next);
    expect(shared.json.a[1]).toBe(previous.json.a[1]);
    expect(shared.json.c).not.toBe(previous.json.c);
    expect(shareUnchanged(structuredClone(previous), previous)).toBe(previous);
    const reordered = { json: { c: { d: 1 }, a: [1, { b: 'x' }], e: 'same' } };
    const sharedReordered = shareUnchanged(reordered, previous) as typeof reordered;
    expect(Object.keys(sharedReordered.json)).toEqual(['c', 'a', 'e']);
    expect(sharedReordered.json.c).toBe(previous.json.c);
    expect(sharedReordered).not.toBe(previous);
  });
});
