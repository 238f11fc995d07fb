import { type BaseEvent, EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { offlineModel } from '../testing/index.js';
import { Flow, listen, start } from './index.js';
import { executions, model, TwoCrewFlow } from './test-support/crew-scenarios.js';

afterEach(() => {
  executions.length = 0;
  model.reset();
});

/** Aborts `controller` when `matches` first holds for an event on `bus`. */
function abortOn(bus: EventBus, controller: AbortController, matches: (event: BaseEvent) => boolean) {
  bus.onAny((_source: unknown, event: BaseEvent) => {
    if (!controller.signal.aborted && matches(event)) controller.abort(new Error('stopped by the test'));
  });
}

async function latestReference(provider: InMemoryProvider): Promise<string> {
  const latest = await provider.latest('mem');
  return `mem#${latest?.id}`;
}

describe('a flow stopped by its abort signal', () => {
  it('starts no method after the abort and continues from its checkpoint without running a completed one again', async () => {
    const provider = new InMemoryProvider();
    const ran: string[] = [];
    class Steps extends Flow<{ trail: string[] }> {
      initialState = { trail: [] as string[] };
      @start() first() {
        ran.push('first');
        this.state.trail.push('first');
        return 'one';
      }
      @listen('first') second() {
        ran.push('second');
        this.state.trail.push('second');
        return 'two';
      }
      @listen('second') third() {
        ran.push('third');
        this.state.trail.push('third');
        return 'three';
      }
    }
    const bus = new EventBus();
    const controller = new AbortController();
    abortOn(
      bus,
      controller,
      (event) => event.type === 'method_execution_finished' && event.context.methodName === 'first',
    );
    const checkpoint = { location: 'mem', provider, onEvents: ['*' as const] };
    await expect(
      new Steps({ bus, checkpoint }).kickoff({ abortSignal: controller.signal }),
    ).rejects.toMatchObject({ code: 'aborted', message: expect.stringContaining('"second"') });
    expect(ran).toEqual(['first']);

    const resumed = await new Steps({ bus: new EventBus() }).kickoff({
      fromCheckpoint: { restoreFrom: await latestReference(provider), provider },
    });
    expect(resumed.status).toBe('completed');
    expect(ran).toEqual(['first', 'second', 'third']);
    expect(resumed.state.trail).toEqual(['first', 'second', 'third']);
  });

  it('stops the crew of a running method after the model call that just completed, and resume pays no checkpointed call again', async () => {
    const provider = new InMemoryProvider();
    const uninterrupted = await new TwoCrewFlow({ bus: new EventBus() }).kickoff();
    const allCalls = model.calls.length;
    model.reset();
    executions.length = 0;

    // Stop right after the third model call completed: the first call of the second method's crew.
    const bus = new EventBus();
    const controller = new AbortController();
    let completed = 0;
    abortOn(bus, controller, (event) => event.type === 'llm_call_completed' && ++completed === 3);
    await expect(
      new TwoCrewFlow({ bus, checkpoint: { location: 'mem', provider, onEvents: ['*'] } }).kickoff({
        abortSignal: controller.signal,
      }),
    ).rejects.toMatchObject({ code: 'aborted' });
    expect(model.calls).toHaveLength(3);
    const reference = await latestReference(provider);
    const saved = await readDocument(provider, 'mem', reference.slice('mem#'.length));
    expect(saved.events.filter((event) => event.type === 'llm_call_completed')).toHaveLength(3);
    // The stopped method is not saved as failed: it is still due.
    expect(saved.events.map((event) => event.type)).not.toContain('method_execution_failed');

    const resumed = await new TwoCrewFlow({ bus: new EventBus() }).kickoff({
      fromCheckpoint: { restoreFrom: reference, provider },
    });
    expect({ ...resumed.state, id: '' }).toEqual({ ...uninterrupted.state, id: '' });
    expect(model.calls).toHaveLength(allCalls);
    const prompts = model.calls.map((call) => JSON.stringify(call.messages));
    expect(new Set(prompts).size).toBe(prompts.length);
    // `research` completed before the stop: not run again.
    expect(executions).toEqual(['research', 'write', 'write']);
  });

  it('aborts the model call in flight of an agent inside a method (a cancel), which the resume then makes', async () => {
    const provider = new InMemoryProvider();
    // The first call hangs for a minute (only the abort ends it); later ones answer at once.
    const advisorModel = offlineModel({ latencyMs: (call) => (call.index === 1 ? 60_000 : 0) });
    class Consult extends Flow<{ advice: string }> {
      initialState = { advice: '' };
      @start() async consult() {
        const agent = new Agent({ role: 'Advisor', goal: 'Advise', backstory: 'Calm', llm: advisorModel });
        this.state.advice = (await agent.kickoff('Which tide is higher?', { bus: this.bus })).raw;
        return this.state.advice;
      }
    }
    const bus = new EventBus();
    const controller = new AbortController();
    abortOn(bus, controller, (event) => event.type === 'llm_call_started');
    await expect(
      new Consult({ bus, checkpoint: { location: 'mem', provider, onEvents: ['*'] } }).kickoff({
        abortSignal: controller.signal,
      }),
    ).rejects.toMatchObject({ code: 'aborted' });

    const resumed = await new Consult({ bus: new EventBus() }).kickoff({
      fromCheckpoint: { restoreFrom: await latestReference(provider), provider },
    });
    expect(resumed.status).toBe('completed');
    expect(resumed.state.advice).toContain('offline');
    expect(advisorModel.calls).toHaveLength(2);
  });
});
