import { EventBus } from '@crewline/events';
import { readDocument, type StoredCheckpoint } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureLogs, countCalls, type LogCapture } from '../testing/index.js';
import { Flow, listen, start } from './index.js';
import { executions, model, TwoCrewFlow } from './test-support/crew-scenarios.js';

class Approval extends Flow<{ draft: string }> {
  initialState = { draft: '' };

  @start() write() {
    this.state.draft = 'a short essay';
  }

  @listen('write') async approve() {
    return this.ask(`Publish "${this.state.draft}"?`);
  }

  @listen('approve') publish(answer: string) {
    return answer === 'yes' ? `published ${this.state.draft}` : 'discarded';
  }
}

let logs: LogCapture;

beforeEach(() => {
  logs = captureLogs();
});

afterEach(() => {
  executions.length = 0;
  model.reset();
  logs.stop();
});

/** A run of TwoCrewFlow on topic 'tides', and its checkpoint taken once `research` had completed. */
async function afterResearch(): Promise<{ provider: InMemoryProvider; reference: string }> {
  const provider = new InMemoryProvider();
  await new TwoCrewFlow({
    bus: new EventBus(),
    checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
  }).kickoff();
  const [first] = await provider.list('mem');
  expect(first?.trigger).toBe('method_execution_finished');
  executions.length = 0;
  model.reset();
  return { provider, reference: `mem#${(first as StoredCheckpoint).id}` };
}

/** The topic each checkpoint written since `before` stores in the flow's state. */
async function topicsWrittenSince(provider: InMemoryProvider, before: Set<string>): Promise<unknown[]> {
  const topics: unknown[] = [];
  for (const checkpoint of await provider.list('mem')) {
    if (before.has(checkpoint.id)) continue;
    const document = await readDocument(provider, 'mem', checkpoint.id);
    const [flowEntity] = document.entities;
    topics.push((flowEntity?.data.state as { json: { topic: unknown } } | undefined)?.json.topic);
  }
  return topics;
}

describe('state edited between a restore and kickoff', () => {
  for (const how of ['fork', 'fromCheckpoint'] as const) {
    it(`${how}: the continued run uses the edited state and its checkpoints store it`, async () => {
      const { provider, reference } = await afterResearch();
      const config = { restoreFrom: reference, provider };
      const flow =
        how === 'fork'
          ? await TwoCrewFlow.fork(config, { bus: new EventBus(), branch: 'glaciers' })
          : await TwoCrewFlow.fromCheckpoint(config, { bus: new EventBus() });
      expect(flow.state.topic).toBe('tides');
      flow.state.topic = 'glaciers';
      expect(flow.state.topic).toBe('glaciers');

      const before = new Set((await provider.list('mem')).map((checkpoint) => checkpoint.id));
      const result = await flow.kickoff();

      expect(result.state.topic).toBe('glaciers');
      expect(executions).toEqual(['write']);
      // The writer crew's three calls are made on the edited topic, none on the saved one.
      expect(model.calls).toHaveLength(3);
      expect(countCalls(model, 'glaciers')).toBe(3);
      expect(countCalls(model, 'Write the article about tides')).toBe(0);
      expect(await topicsWrittenSince(provider, before)).toEqual(['glaciers']);
      // The restored checkpoint is not its run's last: continued on a branch of its own.
      if (how === 'fromCheckpoint') logs.expect('is not the latest of its run');
    });
  }

  it('a paused flow restored with fromCheckpoint and answered with resume(answer) uses the edited state', async () => {
    const provider = new InMemoryProvider();
    const paused = await new Approval({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider },
    }).kickoff();
    expect(paused.status).toBe('paused');
    const flow = await Approval.fromCheckpoint(
      { restoreFrom: paused.pause?.resumeFrom as string, provider },
      { bus: new EventBus() },
    );
    flow.state.draft = 'a longer essay';

    const done = await flow.resume('yes');

    expect(done.output).toBe('published a longer essay');
    expect(done.state.draft).toBe('a longer essay');
  });
});
