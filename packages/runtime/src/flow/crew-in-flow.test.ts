import { EventBus } from '@crewline/events';
import { readDocument, type StoredCheckpoint } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { lookupTool, toolUsingModel } from '../e2e/support/fixtures.js';
import { captureLogs, type LogCapture } from '../testing/capture-logs.js';
import { Flow, listen, start } from './index.js';
import { executions, model, TwoCrewFlow } from './test-support/crew-scenarios.js';

const olderWarning = 'is not the latest of its run';
let logs: LogCapture;

beforeEach(() => {
  logs = captureLogs();
});

afterEach(() => {
  executions.length = 0;
  model.reset();
  logs.stop();
});

async function savedTaskStatuses(
  provider: InMemoryProvider,
  checkpoint: StoredCheckpoint,
): Promise<string[][]> {
  const document = await readDocument(provider, 'mem', checkpoint.id);
  return document.entities
    .filter((entity) => entity.kind === 'crew')
    .map((entity) => (entity.data.tasks as { status: string }[]).map((task) => task.status));
}

describe('crews inside flow methods', () => {
  it('belong to the flow run: their events and checkpoints hold the flow and both crews', async () => {
    const provider = new InMemoryProvider();
    const flow = new TwoCrewFlow({ bus: new EventBus(), checkpoint: { location: 'mem', provider } });
    const result = await flow.kickoff();
    expect(result.status).toBe('completed');
    expect(model.calls).toHaveLength(5);
    const checkpoints = await provider.list('mem');
    expect(checkpoints.map((checkpoint) => checkpoint.trigger)).toEqual(Array(5).fill('task_completed'));
    const last = checkpoints.at(-1) as StoredCheckpoint;
    expect(last.entities.map((entity) => entity.kind)).toEqual(['flow', 'crew', 'crew']);
    expect(await savedTaskStatuses(provider, last)).toEqual([
      ['completed', 'completed'],
      ['completed', 'completed', 'completed'],
    ]);
  });

  it('resumes from every checkpoint without repeating a finished method or a checkpointed LLM call', async () => {
    const provider = new InMemoryProvider();
    const uninterrupted = await new TwoCrewFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff();
    const totalCalls = model.calls.length;
    const checkpoints = await provider.list('mem');
    // Resuming any checkpoint but the run's last one continues on a new branch, with a warning.
    const parents = new Set(checkpoints.map((checkpoint) => checkpoint.parentId));
    for (const checkpoint of checkpoints) {
      const logged = logs.records.length;
      const document = await readDocument(provider, 'mem', checkpoint.id);
      const completedCalls = document.events.filter((event) => event.type === 'llm_call_completed').length;
      executions.length = 0;
      model.reset();
      const restored = await TwoCrewFlow.fromCheckpoint(
        { restoreFrom: `mem#${checkpoint.id}`, provider },
        { bus: new EventBus() },
      );
      const resumed = await restored.kickoff();
      const context = `resumed from ${checkpoint.trigger} ${checkpoint.id}`;
      const warned = logs.records.slice(logged).some((record) => record.message.includes(olderWarning));
      expect(warned, context).toBe(parents.has(checkpoint.id));
      expect(resumed.state, context).toEqual(uninterrupted.state);
      expect(model.calls.length, context).toBe(totalCalls - completedCalls);
      const flowData = document.entities[0]?.data.execution as { completedMethods: string[] };
      for (const method of flowData.completedMethods) expect(executions, context).not.toContain(method);
    }
    logs.expect(olderWarning);
  });

  it('runs a standalone agent inside a method as part of the flow run', async () => {
    const provider = new InMemoryProvider();
    class AskAgent extends Flow<{ answer: string }> {
      initialState = { answer: '' };
      @start() async consult() {
        const agent = new Agent({ role: 'Advisor', goal: 'Advise', backstory: 'Calm', llm: model });
        const output = await agent.kickoff('Which tide is higher?', { bus: this.bus });
        this.state.answer = output.raw;
        return output.raw;
      }
      @listen('consult') done(answer: string) {
        return answer.length > 0;
      }
    }
    const bus = new EventBus();
    const result = await new AskAgent({
      bus,
      checkpoint: { location: 'mem', provider, onEvents: ['llm_call_completed'] },
    }).kickoff();
    expect(result.output).toBe(true);
    const [checkpoint] = await provider.list('mem');
    expect(checkpoint?.entities.map((entity) => entity.kind)).toEqual(['flow', 'agent']);
    const document = await readDocument(provider, 'mem', checkpoint?.id as string);
    expect(document.events.map((event) => event.type)).toEqual(
      expect.arrayContaining([
        'flow_started',
        'method_execution_started',
        'lite_agent_execution_started',
        'llm_call_completed',
      ]),
    );
  });
  it('continues a standalone agent of a method from its saved conversation on resume', async () => {
    const provider = new InMemoryProvider();
    const advisorModel = toolUsingModel(); // one tool call, then an answer: two LLM calls
    class Consult extends Flow<{ advice: string }> {
      initialState = { advice: '' };
      @start() async consult() {
        executions.push('consult');
        const agent = new Agent({
          role: 'Advisor',
          goal: 'Advise',
          backstory: 'Calm',
          llm: advisorModel,
          tools: [lookupTool],
        });
        this.state.advice = (await agent.kickoff('Which tide is higher?', { bus: this.bus })).raw;
        return this.state.advice;
      }
    }
    const uninterrupted = await new Consult({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff();
    expect(advisorModel.calls).toHaveLength(2);
    const checkpoints = await provider.list('mem');
    const inConversation = checkpoints.filter((checkpoint) =>
      ['llm_call_completed', 'tool_usage_finished'].includes(checkpoint.trigger),
    );
    expect(inConversation).toHaveLength(3);
    // Resuming any checkpoint but the run's last one continues on a new branch, with a warning.
    const parents = new Set(checkpoints.map((checkpoint) => checkpoint.parentId));
    for (const checkpoint of checkpoints) {
      const logged = logs.records.length;
      const document = await readDocument(provider, 'mem', checkpoint.id);
      const completedCalls = document.events.filter((event) => event.type === 'llm_call_completed').length;
      const startedAgent = document.events.some((event) => event.type === 'lite_agent_execution_started');
      advisorModel.reset();
      const resumeBus = new EventBus();
      const emitted: string[] = [];
      resumeBus.onAny((_source: unknown, event: { type: string }) => void emitted.push(event.type));
      const restored = await Consult.fromCheckpoint(
        { restoreFrom: `mem#${checkpoint.id}`, provider },
        { bus: resumeBus },
      );
      const resumed = await restored.kickoff();
      const context = `resumed from ${checkpoint.trigger} ${checkpoint.id}`;
      const warned = logs.records.slice(logged).some((record) => record.message.includes(olderWarning));
      expect(warned, context).toBe(parents.has(checkpoint.id));
      expect(resumed.state.advice, context).toBe(uninterrupted.state.advice);
      // No LLM call whose answer was checkpointed is made again.
      expect(advisorModel.calls.length, context).toBe(2 - completedCalls);
      if (startedAgent) expect(emitted.includes('lite_agent_execution_started'), context).toBe(false);
    }
    logs.expect(olderWarning);
  });
});
