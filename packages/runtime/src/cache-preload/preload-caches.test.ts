import { createAnthropic } from '@ai-sdk/anthropic';
import { type BaseEvent, type LogRecord, setLogSink } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { runAgentLoop } from '../agent-loop/agent-loop.js';
import { newConversation } from '../agent-loop/conversation.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { commonPrefix, sharedPrefixLength } from './common-prefix.js';
import { preloadCaches } from './preload-caches.js';
import { isAnthropicModel, systemPromptFor, systemPromptText } from './system-prompt.js';

// Warnings are part of the contract (best-effort probes log, never throw): capture them. Vitest isolates
// test files, so the sink does not leak into other files.
const logs: LogRecord[] = [];
setLogSink((record) => logs.push(record));

const sharedRules = `You are part of a research crew. Follow the house rules. ${'Cite sources, keep numbers exact, say when unsure. '.repeat(30)}`;

function agent(name: string, system: string, model = offlineModel({ name })) {
  return { model, modelId: `offline:${name}`, system, context: { agentRole: name } };
}

describe('commonPrefix and sharedPrefixLength', () => {
  it('finds the longest common prefix and only counts it when long enough', () => {
    expect(commonPrefix(['abcd', 'abce', 'abx'])).toBe('ab');
    expect(commonPrefix(['same', 'same'])).toBe('same');
    expect(commonPrefix([])).toBe('');
    expect(commonPrefix(['x\uD83D\uDE00', 'x\uD83D\uDE01'])).toBe('x');
    expect(sharedPrefixLength([`${sharedRules}A`, `${sharedRules}B`])).toBe(sharedRules.length);
    expect(sharedPrefixLength(['short A', 'short B'])).toBe(0);
    expect(sharedPrefixLength([`${sharedRules}A`])).toBe(0);
  });
});

describe('preloadCaches', () => {
  it('probes every agent once with 1 output token, temperature 0 and a short user message', async () => {
    const agents = [
      agent('researcher', `${sharedRules} Researcher.`),
      agent('writer', `${sharedRules} Writer.`),
    ];
    const events: BaseEvent[] = [];
    const result = await preloadCaches({ agents, emit: (_source, event) => events.push(event) });
    expect(result.strategy).toBe('parallel');
    expect(result.probes.map((probe) => [probe.modelId, probe.ok])).toEqual([
      ['offline:researcher', true],
      ['offline:writer', true],
    ]);
    for (const item of agents) {
      expect(item.model.calls).toHaveLength(1);
      const call = item.model.calls[0]!;
      expect(call.settings).toEqual({ maxOutputTokens: 1, temperature: 0 });
      expect(call.system).toBe(item.system);
      expect(call.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Ready.' }] }]);
    }
    expect(result.usage.outputTokens).toBe(2);
    expect(events.map((event) => event.type).sort()).toEqual([
      'llm_call_completed',
      'llm_call_completed',
      'llm_call_started',
      'llm_call_started',
    ]);
    expect(
      events.find((event) => event.type === 'llm_call_started' && event.context.agentRole === 'writer'),
    ).toBeDefined();
  });

  it('changes nothing on the model: later real calls carry their own settings', async () => {
    const model = offlineModel({ name: 'analyst' });
    const before = JSON.stringify(Object.entries(model).filter(([key]) => key !== 'calls'));
    await preloadCaches({ agents: [agent('analyst', 'You analyse.', model), agent('other', 'You check.')] });
    expect(JSON.stringify(Object.entries(model).filter(([key]) => key !== 'calls'))).toBe(before);
    await runAgentLoop({
      model,
      modelId: 'offline:analyst',
      system: 'You analyse.',
      prompt: 'Task: analyse churn',
      conversation: newConversation(),
      emit: () => {},
      context: {},
    });
    expect(model.calls).toHaveLength(2);
    expect(model.calls[1]!.settings).toEqual({});
  });

  it('probes one agent after another with the sequential strategy', async () => {
    const order: string[] = [];
    const slow = (name: string, latencyMs: number) =>
      agent(
        name,
        `Prompt of ${name}`,
        offlineModel({
          name,
          latencyMs: () => {
            order.push(`start ${name}`);
            return latencyMs;
          },
          usage: () => {
            order.push(`end ${name}`);
            return {};
          },
        }),
      );
    await preloadCaches({ agents: [slow('first', 20), slow('second', 1)], strategy: 'sequential' });
    expect(order).toEqual(['start first', 'end first', 'start second', 'end second']);
    order.length = 0;
    await preloadCaches({ agents: [slow('first', 20), slow('second', 1)], strategy: 'parallel' });
    expect(order.slice(0, 2)).toEqual(['start first', 'start second']);
  });

  it('warms a long shared prefix once, then each full prompt', async () => {
    const first = agent('researcher', `${sharedRules} You research.`);
    const second = agent('writer', `${sharedRules} You write.`);
    const result = await preloadCaches({ agents: [first, second], strategy: 'shared_prefix' });
    expect(result.strategy).toBe('shared_prefix');
    expect(result.sharedPrefixLength).toBe(commonPrefix([first.system, second.system]).length);
    expect(result.sharedPrefixLength).toBeGreaterThanOrEqual(1024);
    expect(result.probes.map((probe) => probe.part)).toEqual(['shared_prefix', 'full', 'full']);
    const prefix = commonPrefix([first.system, second.system]);
    expect(prefix.startsWith(sharedRules)).toBe(true);
    expect(first.model.calls.map((call) => call.system)).toEqual([prefix, first.system]);
    expect(second.model.calls.map((call) => call.system)).toEqual([second.system]);
  });

  it('falls back to parallel when the shared prefix is short', async () => {
    const first = agent('researcher', 'You research markets.');
    const second = agent('writer', 'You write reports.');
    const result = await preloadCaches({ agents: [first, second], strategy: 'shared_prefix' });
    expect(result.strategy).toBe('parallel');
    expect(result.sharedPrefixLength).toBe(0);
    expect(first.model.calls).toHaveLength(1);
    expect(second.model.calls).toHaveLength(1);
  });

  it('never throws: a failing probe is reported and the others still run', async () => {
    const broken = agent('broken', 'You fail.', offlineModel({ name: 'broken', failOn: [1] }));
    const fine = agent('fine', 'You work.');
    const events: BaseEvent[] = [];
    logs.length = 0;
    const result = await preloadCaches({
      agents: [broken, fine],
      emit: (_source, event) => events.push(event),
    });
    expect(logs.map((record) => [record.level, record.component])).toContainEqual(['warn', 'cache-preload']);
    expect(result.probes.map((probe) => probe.ok)).toEqual([false, true]);
    expect(result.probes[0]!.error).toContain('simulated failure');
    expect(events.some((event) => event.type === 'llm_call_failed')).toBe(true);
    const exploding = {
      ...fine,
      system: {
        role: 'system' as const,
        get content(): string {
          throw new Error('bad prompt');
        },
      },
    };
    await expect(preloadCaches({ agents: [exploding] })).resolves.toMatchObject({ probes: [] });
    expect(logs.at(-1)!.message).toContain('cache preload failed');
  });

  it('skips empty prompts and probes identical model and prompt pairs once', async () => {
    const model = offlineModel({ name: 'shared' });
    const result = await preloadCaches({
      agents: [
        agent('shared', 'Same prompt', model),
        agent('shared', 'Same prompt', model),
        agent('empty', ''),
      ],
    });
    expect(result.probes).toHaveLength(1);
    expect(model.calls).toHaveLength(1);
  });

  it('makes the next real call a cache read (offline prompt-cache simulation)', async () => {
    const model = offlineModel({ name: 'cached', promptCache: true });
    const system = `${sharedRules} Cached agent.`;
    await preloadCaches({ agents: [agent('cached', system, model), agent('other', 'x')] });
    const result = await runAgentLoop({
      model,
      modelId: 'offline:cached',
      system,
      prompt: 'Task: summarise',
      conversation: newConversation(),
      emit: () => {},
      context: {},
    });
    expect(result.usage.cachedInputTokens).toBe(Math.ceil(system.length / 4));
  });
});

describe('Anthropic cache control', () => {
  function fakeAnthropic() {
    const bodies: Record<string, any>[] = [];
    const fetch = (async (_url: string | URL | Request, init?: RequestInit) => {
      bodies.push(JSON.parse(String(init?.body)));
      return new Response(
        JSON.stringify({
          id: `msg_${bodies.length}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [{ type: 'text', text: 'OK' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: {
            input_tokens: 20,
            output_tokens: 1,
            cache_read_input_tokens: 1500,
            cache_creation_input_tokens: 0,
          },
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    }) as typeof globalThis.fetch;
    const model = createAnthropic({ apiKey: 'sk-ant-test-not-a-real-key', fetch })('claude-sonnet-4-5');
    return { model, bodies };
  }

  it('marks only Anthropic system prompts, optionally split at a shared prefix', () => {
    expect(isAnthropicModel('anthropic:claude-sonnet-4-5')).toBe(true);
    expect(isAnthropicModel(offlineModel())).toBe(false);
    expect(systemPromptFor('openai:gpt-4o', 'text')).toBe('text');
    expect(systemPromptFor('anthropic:claude', 'text')).toEqual({
      role: 'system',
      content: 'text',
      providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
    });
    const split = systemPromptFor('anthropic:claude', 'shared-part|own-part', { splitAt: 12 });
    expect(Array.isArray(split) && split.map((message) => message.content)).toEqual([
      'shared-part|',
      'own-part',
    ]);
    expect(systemPromptText(split)).toBe('shared-part|own-part');
    expect(systemPromptFor('anthropic:claude', 'abc', { splitAt: 3 })).not.toBeInstanceOf(Array);
  });

  it('sends cache_control on the probe and on the real call, and reports cache reads', async () => {
    const { model, bodies } = fakeAnthropic();
    const system = systemPromptFor(model, sharedRules);
    const result = await preloadCaches({
      agents: [{ model, modelId: 'anthropic:claude-sonnet-4-5', system }, agent('other', 'x')],
    });
    expect(result.probes[0]).toMatchObject({ ok: true, usage: { cachedInputTokens: 1500 } });
    expect(bodies[0]!.system).toEqual([
      { type: 'text', text: sharedRules, cache_control: { type: 'ephemeral' } },
    ]);
    expect(bodies[0]!.max_tokens).toBe(1);
    expect(bodies[0]!.temperature).toBe(0);

    const loop = await runAgentLoop({
      model,
      modelId: 'anthropic:claude-sonnet-4-5',
      system,
      prompt: 'Task: summarise',
      conversation: newConversation(),
      emit: () => {},
      context: {},
    });
    expect(bodies[1]!.system).toEqual(bodies[0]!.system);
    expect(bodies[1]!.max_tokens).not.toBe(1);
    expect(loop.usage.cachedInputTokens).toBe(1500);
  });

  it('sends two cache blocks for a prompt split at the shared prefix', async () => {
    const { model, bodies } = fakeAnthropic();
    const text = `${sharedRules}You write.`;
    await preloadCaches({
      agents: [
        {
          model,
          modelId: 'anthropic:claude-sonnet-4-5',
          system: systemPromptFor(model, text, { splitAt: sharedRules.length }),
        },
      ],
    });
    expect(bodies[0]!.system).toEqual([
      { type: 'text', text: sharedRules, cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'You write.', cache_control: { type: 'ephemeral' } },
    ]);
  });
});
