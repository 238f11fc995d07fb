import type { LanguageModelV3 } from '@ai-sdk/provider';
import { type BaseEvent, CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { offlineModel } from '../models/offline/offline-model.js';
import { countCalls, lastCall, toolResultsSeen } from '../testing/call-helpers.js';
import { defineTool } from '../tools/define-tool.js';
import { type AgentLoopOptions, runAgentLoop } from './agent-loop.js';
import { FINAL_ANSWER_REQUEST } from './control-messages.js';
import { type Conversation, newConversation } from './conversation.js';

interface Recorded {
  type: string;
  event: BaseEvent;
  /** The conversation as it was when the event was emitted (what a checkpoint would store). */
  conversation: Conversation;
}

function recorder() {
  const events: Recorded[] = [];
  let conversation: Conversation | undefined;
  return {
    events,
    types: () => events.map((item) => item.type),
    watch(target: Conversation) {
      conversation = target;
    },
    emit: (_source: unknown, event: BaseEvent) => {
      events.push({
        type: event.type,
        event,
        conversation: JSON.parse(JSON.stringify(conversation ?? null)),
      });
    },
  };
}

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

let executions = 0;
const countingAdd = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => {
    executions += 1;
    return a + b;
  },
});

const explode = defineTool({
  name: 'explode',
  description: 'Always fails',
  inputSchema: z.object({}),
  execute: () => {
    throw new Error('the database is on fire');
  },
});

const task = 'Task: Add 2 and 3, then report the sum\nExpected output: one sentence';

function options(
  overrides: Partial<AgentLoopOptions> & Pick<AgentLoopOptions, 'model' | 'conversation' | 'emit'>,
): AgentLoopOptions {
  return {
    modelId: 'offline:default',
    system: 'You are a precise calculator.',
    prompt: task,
    context: { taskId: 'task-1', agentId: 'agent-1', agentRole: 'Calculator' },
    ...overrides,
  };
}

describe('runAgentLoop', () => {
  it('runs scripted tool calls natively and ends with the model answer', async () => {
    const model = offlineModel({ script: [{ toolName: 'add', input: { a: 2, b: 3 } }] });
    const conversation = newConversation();
    const record = recorder();
    record.watch(conversation);
    const result = await runAgentLoop(options({ model, conversation, emit: record.emit, tools: { add } }));
    expect(record.types()).toEqual([
      'llm_call_started',
      'llm_call_completed',
      'tool_usage_started',
      'tool_usage_finished',
      'llm_call_started',
      'llm_call_completed',
    ]);
    expect(result.output).toContain('add -> 5');
    expect(conversation.finished).toBe(true);
    expect(conversation.output).toBe(result.output);
    expect(conversation.llmCalls).toBe(2);
    expect(model.calls).toHaveLength(2);
    expect(model.calls[0]!.system).toBe('You are a precise calculator.');
    expect(toolResultsSeen(lastCall(model)!)).toEqual(['add']);
    const finished = record.events.find((item) => item.type === 'tool_usage_finished')!.event as BaseEvent & {
      result: unknown;
    };
    expect(finished.result).toBe(5);
    expect(finished.context).toEqual({ taskId: 'task-1', agentId: 'agent-1', agentRole: 'Calculator' });
    const completed = record.events.filter((item) => item.type === 'llm_call_completed');
    const firstCompleted = completed[0]!.event as BaseEvent & {
      toolCalls: { toolName: string }[];
      model: string;
      callId: string;
    };
    expect(firstCompleted.model).toBe('offline:default');
    expect(firstCompleted.toolCalls.map((call) => call.toolName)).toEqual(['add']);
    const started = record.events[0]!.event as BaseEvent & { callId: string };
    expect(started.callId).toBe(firstCompleted.callId);
  });

  it('records each step in the conversation before emitting its completion event', async () => {
    const model = offlineModel({ script: [{ toolName: 'add', input: { a: 1, b: 1 } }] });
    const conversation = newConversation();
    const record = recorder();
    record.watch(conversation);
    await runAgentLoop(options({ model, conversation, emit: record.emit, tools: { add } }));
    const [startedFirst, completedFirst, , toolFinished, , completedLast] = record.events;
    expect(startedFirst!.conversation.llmCalls).toBe(0);
    expect(completedFirst!.conversation.llmCalls).toBe(1);
    expect(completedFirst!.conversation.messages.at(-1)!.role).toBe('assistant');
    expect(completedFirst!.conversation.usage.inputTokens).toBeGreaterThan(0);
    expect(toolFinished!.conversation.messages.at(-1)!.role).toBe('tool');
    expect(completedLast!.conversation.llmCalls).toBe(2);
    // Only the loop's own bookkeeping of the final answer is left after the last event.
    expect(completedLast!.conversation.finished).toBe(false);
  });

  it('resumes a conversation saved between a model call and its tool result without calling the model again', async () => {
    const script = [{ toolName: 'add', input: { a: 2, b: 3 } }];
    // The uninterrupted run, for reference.
    const reference = offlineModel({ script });
    const referenceResult = await runAgentLoop(
      options({ model: reference, conversation: newConversation(), emit: () => {}, tools: { add } }),
    );

    // The interrupted run: checkpointed on llm_call_completed, then the process died.
    const firstProcess = offlineModel({ script });
    const conversation = newConversation();
    const record = recorder();
    record.watch(conversation);
    await runAgentLoop(options({ model: firstProcess, conversation, emit: record.emit, tools: { add } }));
    const saved = record.events.find((item) => item.type === 'llm_call_completed')!.conversation;
    expect(saved.llmCalls).toBe(1);

    executions = 0;
    const secondProcess = offlineModel({ script });
    const restored: Conversation = JSON.parse(JSON.stringify(saved));
    const resumed = recorder();
    resumed.watch(restored);
    const result = await runAgentLoop(
      options({
        model: secondProcess,
        conversation: restored,
        emit: resumed.emit,
        tools: { add: countingAdd },
      }),
    );
    // The pending tool ran first, then exactly one model call: the checkpointed one was not repeated.
    expect(resumed.types()).toEqual([
      'tool_usage_started',
      'tool_usage_finished',
      'llm_call_started',
      'llm_call_completed',
    ]);
    expect(executions).toBe(1);
    expect(secondProcess.calls).toHaveLength(1);
    expect(countCalls(secondProcess, (call) => call.messages.length === 1)).toBe(0);
    expect(restored.llmCalls).toBe(2);
    expect(result.output).toBe(referenceResult.output);
    expect(result.usage).toEqual(referenceResult.usage);
  });

  it('resumes after a checkpointed tool result by calling the model with it', async () => {
    const script = [{ toolName: 'add', input: { a: 4, b: 4 } }];
    const conversation = newConversation();
    const record = recorder();
    record.watch(conversation);
    await runAgentLoop(
      options({ model: offlineModel({ script }), conversation, emit: record.emit, tools: { add } }),
    );
    const saved = record.events.find((item) => item.type === 'tool_usage_finished')!.conversation;
    executions = 0;
    const model = offlineModel({ script });
    const result = await runAgentLoop(
      options({ model, conversation: saved, emit: () => {}, tools: { add: countingAdd } }),
    );
    expect(executions).toBe(0);
    expect(model.calls).toHaveLength(1);
    expect(result.output).toContain('add -> 8');
  });

  it('returns a finished conversation without calling the model, and finishes a saved final answer', async () => {
    const conversation = newConversation();
    const record = recorder();
    record.watch(conversation);
    const first = await runAgentLoop(options({ model: offlineModel(), conversation, emit: record.emit }));
    const model = offlineModel();
    const again = await runAgentLoop(options({ model, conversation, emit: () => {} }));
    expect(again).toEqual(first);
    expect(model.calls).toHaveLength(0);
    // Saved on llm_call_completed of the final answer, before the loop marked it finished.
    const saved = record.events.find((item) => item.type === 'llm_call_completed')!.conversation;
    expect(saved.finished).toBe(false);
    const fromSaved = await runAgentLoop(options({ model, conversation: saved, emit: () => {} }));
    expect(fromSaved.output).toBe(first.output);
    expect(model.calls).toHaveLength(0);
  });

  it('turns a tool error into a result the model reads, and keeps going', async () => {
    const model = offlineModel({ script: [{ toolName: 'explode', input: {} }] });
    const conversation = newConversation();
    const record = recorder();
    record.watch(conversation);
    const result = await runAgentLoop(
      options({ model, conversation, emit: record.emit, tools: { explode } }),
    );
    expect(record.types()).toEqual([
      'llm_call_started',
      'llm_call_completed',
      'tool_usage_started',
      'tool_usage_error',
      'llm_call_started',
      'llm_call_completed',
    ]);
    const error = record.events.find((item) => item.type === 'tool_usage_error')!;
    expect((error.event as BaseEvent & { error: string }).error).toContain('the database is on fire');
    expect(error.conversation.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          output: { type: 'error-text', value: expect.stringContaining('the database is on fire') },
        },
      ],
    });
    expect(result.output).toContain('explode -> tool "explode" failed');
    expect(JSON.stringify(lastCall(model)!.messages)).toContain('the database is on fire');
  });

  it('reports invalid input and unknown tools to the model as results', async () => {
    const model = offlineModel({
      script: [
        {
          toolCalls: [
            { toolName: 'add', input: { a: 'two' } },
            { toolName: 'subtract', input: { a: 1 } },
          ],
        },
      ],
    });
    const conversation = newConversation();
    const record = recorder();
    record.watch(conversation);
    const result = await runAgentLoop(options({ model, conversation, emit: record.emit, tools: { add } }));
    expect(record.types()).toEqual([
      'llm_call_started',
      'llm_call_completed',
      'tool_validate_input_error',
      'tool_selection_error',
      'llm_call_started',
      'llm_call_completed',
    ]);
    const messages = JSON.stringify(lastCall(model)!.messages);
    expect(messages).toContain('invalid input for tool \\"add\\": a: ');
    expect(messages).toContain('there is no tool named \\"subtract\\"; available tools: add');
    // Both results went into one tool message after the assistant turn.
    expect(conversation.messages.filter((message) => message.role === 'tool')).toHaveLength(1);
    expect(result.output.length).toBeGreaterThan(0);
  });

  it('asks for the best final answer, with tools disabled, on the last allowed call', async () => {
    const model = offlineModel({ script: () => ({ toolName: 'add', input: { a: 1, b: 2 } }) });
    const conversation = newConversation();
    const result = await runAgentLoop(
      options({ model, conversation, emit: () => {}, tools: { add }, maxIterations: 3 }),
    );
    expect(model.calls).toHaveLength(3);
    expect(model.calls.slice(0, 2).map((call) => call.toolChoice?.type ?? 'auto')).toEqual(['auto', 'auto']);
    expect(model.calls[2]!.toolChoice).toEqual({ type: 'none' });
    expect(model.calls[2]!.userText).toContain('Add 2 and 3');
    expect(JSON.stringify(model.calls[2]!.messages)).toContain(FINAL_ANSWER_REQUEST);
    expect(conversation.llmCalls).toBe(3);
    expect(result.output).toContain('[offline model]');
  });

  it('throws a typed error when a model keeps calling tools past maxIterations', async () => {
    const stubborn = stubbornModel();
    const conversation = newConversation();
    const failure = await runAgentLoop(
      options({ model: stubborn, conversation, emit: () => {}, tools: { add }, maxIterations: 2 }),
    ).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'model_error')).toBe(true);
    expect((failure as Error).message).toContain('maxIterations 2');
    // The first call and its tool result are kept; the rejected last call is not counted.
    expect(conversation.llmCalls).toBe(1);
    expect(conversation.messages.at(-1)!.role).toBe('user');
    await expect(
      runAgentLoop(
        options({ model: offlineModel(), conversation: newConversation(), emit: () => {}, maxIterations: 0 }),
      ),
    ).rejects.toThrow(/maxIterations/);
  });

  it('validates structured output and returns the parsed value', async () => {
    const schema = z.object({ sum: z.number(), explanation: z.string() });
    const model = offlineModel();
    const result = await runAgentLoop(
      options({ model, conversation: newConversation(), emit: () => {}, outputSchema: schema }),
    );
    expect(schema.parse(result.structured)).toEqual(result.structured);
    expect(JSON.parse(result.output)).toEqual(result.structured);
    expect(model.calls[0]!.responseFormat).toMatchObject({ type: 'json', schema: { type: 'object' } });
  });

  it('asks once more when the answer is not valid JSON, then succeeds', async () => {
    const schema = z.object({ sum: z.number() });
    const model = offlineModel({ script: [{ text: 'The sum is five.' }] });
    const conversation = newConversation();
    const result = await runAgentLoop(options({ model, conversation, emit: () => {}, outputSchema: schema }));
    expect(model.calls).toHaveLength(2);
    expect(model.calls[1]!.messages.at(-1)).toMatchObject({ role: 'user' });
    expect(JSON.stringify(model.calls[1]!.messages.at(-1))).toContain('not valid JSON');
    expect(schema.parse(result.structured)).toEqual(result.structured);
    expect(conversation.structuredOutputRetries).toBe(1);
  });

  it('accepts JSON inside a fenced block and fails with a typed error after one useless retry', async () => {
    const schema = z.object({ sum: z.number() });
    const fenced = offlineModel({ script: [{ text: 'Here:\n```json\n{"sum": 5}\n```' }] });
    expect(
      (
        await runAgentLoop(
          options({ model: fenced, conversation: newConversation(), emit: () => {}, outputSchema: schema }),
        )
      ).structured,
    ).toEqual({
      sum: 5,
    });
    const wrong = offlineModel({ script: () => ({ text: '{"sum": "five"}' }) });
    const failure = await runAgentLoop(
      options({ model: wrong, conversation: newConversation(), emit: () => {}, outputSchema: schema }),
    ).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'model_error')).toBe(true);
    expect((failure as Error).message).toContain('sum');
    expect(wrong.calls).toHaveLength(2);
  });

  it('does not ask again for structured output when no call is left', async () => {
    const model = offlineModel({ script: [{ text: 'no json here' }] });
    const failure = await runAgentLoop(
      options({
        model,
        conversation: newConversation(),
        emit: () => {},
        outputSchema: z.object({ sum: z.number() }),
        maxIterations: 1,
      }),
    ).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'model_error')).toBe(true);
    expect(model.calls).toHaveLength(1);
  });

  it('accumulates token usage, cached input tokens included, across calls and a resume', async () => {
    const model = offlineModel({
      script: [{ toolName: 'add', input: { a: 1, b: 1 } }],
      usage: (call) => ({ inputTokens: 100 * call.messages.length, outputTokens: 10, cachedInputTokens: 40 }),
    });
    const conversation = newConversation();
    const result = await runAgentLoop(options({ model, conversation, emit: () => {}, tools: { add } }));
    // Call 1 sees one message, call 2 sees three.
    expect(result.usage).toEqual({
      inputTokens: 400,
      outputTokens: 20,
      totalTokens: 420,
      cachedInputTokens: 80,
    });
    expect(conversation.usage).toEqual(result.usage);
  });

  it('emits llm_call_failed and a typed error when the model fails, leaving the conversation resumable', async () => {
    const model = offlineModel({ failOn: [1] });
    const conversation = newConversation();
    const record = recorder();
    record.watch(conversation);
    const failure = await runAgentLoop(options({ model, conversation, emit: record.emit })).catch(
      (error: unknown) => error,
    );
    expect(CrewlineError.hasCode(failure, 'model_error')).toBe(true);
    expect(record.types()).toEqual(['llm_call_started', 'llm_call_failed']);
    expect(conversation.llmCalls).toBe(0);
    const result = await runAgentLoop(options({ model, conversation, emit: record.emit }));
    expect(result.output).toContain('[offline model]');
    expect(model.calls).toHaveLength(2);
  });

  it('stops on abort with an aborted error and keeps the conversation as it was', async () => {
    const model = offlineModel({ latencyMs: 60_000 });
    const controller = new AbortController();
    const conversation = newConversation();
    const record = recorder();
    record.watch(conversation);
    const running = runAgentLoop(
      options({ model, conversation, emit: record.emit, abortSignal: controller.signal }),
    );
    controller.abort();
    const failure = await running.catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'aborted')).toBe(true);
    expect(record.types()).toEqual(['llm_call_started', 'llm_call_failed']);
    expect(conversation.llmCalls).toBe(0);
    await expect(
      runAgentLoop(options({ model, conversation, emit: () => {}, abortSignal: controller.signal })),
    ).rejects.toMatchObject({
      code: 'aborted',
    });
  });

  it('stops on an abort inside a tool without recording it as a tool result, and runs the tool on resume', async () => {
    const controller = new AbortController();
    const stopping = defineTool({
      name: 'add',
      description: 'Adds two numbers',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: (_input, { abortSignal }) => {
        controller.abort(); // e.g. Ctrl+C while the tool works
        abortSignal?.throwIfAborted();
        return 0;
      },
    });
    const model = offlineModel({ script: [{ toolName: 'add', input: { a: 2, b: 3 } }] });
    const conversation = newConversation();
    const record = recorder();
    record.watch(conversation);
    const failure = await runAgentLoop(
      options({
        model,
        conversation,
        emit: record.emit,
        tools: { add: stopping },
        abortSignal: controller.signal,
      }),
    ).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'aborted')).toBe(true);
    expect(record.types()).toEqual(['llm_call_started', 'llm_call_completed', 'tool_usage_started']);
    // The call is still pending: no result, no error result.
    expect(conversation.messages.map((message) => message.role)).toEqual(['user', 'assistant']);

    executions = 0;
    const result = await runAgentLoop(
      options({ model, conversation, emit: () => {}, tools: { add: countingAdd } }),
    );
    expect(executions).toBe(1);
    expect(model.calls).toHaveLength(2);
    expect(toolResultsSeen(lastCall(model)!)).toEqual(['add']);
    expect(JSON.stringify(conversation.messages)).not.toContain('error-text');
    expect(result.output).toContain('[offline model]');
  });

  it('treats an aborted nested run or an AbortError thrown by a tool as an abort, not a tool failure', async () => {
    for (const thrown of [
      new CrewlineError('agent-loop', 'aborted', 'the delegated work was aborted'),
      new DOMException('The operation was aborted', 'AbortError'),
    ]) {
      const aborting = defineTool({
        name: 'add',
        description: 'Adds two numbers',
        inputSchema: z.object({ a: z.number(), b: z.number() }),
        execute: () => {
          throw thrown;
        },
      });
      const model = offlineModel({ script: [{ toolName: 'add', input: { a: 2, b: 3 } }] });
      const conversation = newConversation();
      const record = recorder();
      const failure = await runAgentLoop(
        options({ model, conversation, emit: record.emit, tools: { add: aborting } }),
      ).catch((error: unknown) => error);
      expect(CrewlineError.hasCode(failure, 'aborted'), thrown.name).toBe(true);
      expect(record.types()).not.toContain('tool_usage_error');
      expect(conversation.messages.at(-1)?.role).toBe('assistant');
    }
  });

  it('passes per-call settings and resolves a model given as an id', async () => {
    const conversation = newConversation();
    const model = offlineModel({ name: 'registered' });
    await runAgentLoop(
      options({
        model: 'team:calculator',
        models: { 'team:calculator': model },
        conversation,
        emit: () => {},
        settings: { temperature: 0.3, maxOutputTokens: 500, providerOptions: { offline: { mode: 'test' } } },
      }),
    );
    expect(model.calls[0]!.settings).toEqual({ temperature: 0.3, maxOutputTokens: 500 });
    expect(model.calls[0]!.providerOptions).toEqual({ offline: { mode: 'test' } });
  });

  it('keeps the conversation plain JSON', async () => {
    const conversation = newConversation();
    await runAgentLoop(
      options({
        model: offlineModel({ script: [{ toolName: 'add', input: { a: 2, b: 2 } }] }),
        conversation,
        emit: () => {},
        tools: { add },
      }),
    );
    expect(JSON.parse(JSON.stringify(conversation))).toEqual(conversation);
  });
});

/** A model that ignores tool choice and always calls a tool (some providers do). */
function stubbornModel(): LanguageModelV3 {
  let count = 0;
  return {
    specificationVersion: 'v3',
    provider: 'stubborn',
    modelId: 'tool-lover',
    supportedUrls: {},
    async doGenerate() {
      count += 1;
      return {
        content: [
          { type: 'tool-call', toolCallId: `call-${count}`, toolName: 'add', input: '{"a":1,"b":1}' },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        },
        warnings: [],
      };
    },
    async doStream() {
      throw new Error('not used');
    },
  };
}
