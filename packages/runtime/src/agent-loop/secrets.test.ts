import type { BaseEvent } from '@crewline/events';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { offlineModel } from '../models/offline/offline-model.js';
import { resolveModel } from '../models/resolve-model.js';
import { defineTool } from '../tools/define-tool.js';
import { runAgentLoop } from './agent-loop.js';
import { newConversation } from './conversation.js';

const plantedKey = 'sk-proj-PLANTEDfakeKEY0123456789abcdefXYZ';
const savedKey = process.env.OPENAI_API_KEY;

afterEach(() => {
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

/** A fake OpenAI Responses API: first a tool call, then a text answer. Records request headers. */
function fakeOpenAI() {
  const authorizations: string[] = [];
  let count = 0;
  const fetch = (async (_url: string | URL | Request, init?: RequestInit) => {
    authorizations.push(new Headers(init?.headers).get('authorization') ?? '');
    count += 1;
    const output =
      count === 1
        ? [
            {
              type: 'function_call',
              id: 'fc_1',
              call_id: 'call_1',
              name: 'lookup',
              arguments: '{"query":"revenue"}',
              status: 'completed',
            },
          ]
        : [
            {
              type: 'message',
              role: 'assistant',
              id: 'msg_1',
              status: 'completed',
              content: [{ type: 'output_text', text: 'Revenue grew 12%.', annotations: [] }],
            },
          ];
    return new Response(
      JSON.stringify({
        id: `resp_${count}`,
        object: 'response',
        created_at: 1_700_000_000,
        model: 'gpt-4o-mini',
        status: 'completed',
        output,
        usage: {
          input_tokens: 50,
          output_tokens: 7,
          input_tokens_details: { cached_tokens: 32 },
          output_tokens_details: { reasoning_tokens: 0 },
        },
      }),
      { status: 200, headers: { 'content-type': 'application/json' } },
    );
  }) as typeof globalThis.fetch;
  return { fetch, authorizations };
}

describe('credentials', () => {
  it('never puts a planted OpenAI key into events or the conversation, even when the key is used', async () => {
    process.env.OPENAI_API_KEY = plantedKey;
    const fake = fakeOpenAI();
    const model = resolveModel('openai:gpt-4o-mini', { fetch: fake.fetch });
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks up a figure',
      inputSchema: z.object({ query: z.string() }),
      execute: ({ query }) => `${query}: 12%`,
    });
    const events: BaseEvent[] = [];
    const conversation = newConversation();
    const result = await runAgentLoop({
      model,
      modelId: 'openai:gpt-4o-mini',
      system: 'You are an analyst.',
      prompt: 'How much did revenue grow?',
      conversation,
      tools: { lookup },
      emit: (source, event) => events.push(event, source as BaseEvent),
      context: { taskId: 't' },
    });
    // The key was read from the environment at request time and used...
    expect(fake.authorizations).toEqual([`Bearer ${plantedKey}`, `Bearer ${plantedKey}`]);
    expect(result.output).toBe('Revenue grew 12%.');
    // ...and cache reads reported by OpenAI are surfaced.
    expect(result.usage).toEqual({
      inputTokens: 100,
      outputTokens: 14,
      totalTokens: 114,
      cachedInputTokens: 64,
    });
    // ...but it is nowhere in what the loop emits or in what a checkpoint would store.
    const emitted = JSON.stringify(events);
    expect(emitted).toContain('tool_usage_finished');
    expect(emitted).not.toContain(plantedKey);
    expect(emitted).not.toContain('PLANTED');
    expect(JSON.stringify(conversation)).not.toContain('PLANTED');
  });

  it('redacts a key that a failing provider puts in its error message', async () => {
    process.env.OPENAI_API_KEY = plantedKey;
    const model = offlineModel({ failOn: () => `invalid api key ${plantedKey}` });
    const events: BaseEvent[] = [];
    const failure = await runAgentLoop({
      model,
      modelId: 'offline:default',
      system: 's',
      prompt: 'p',
      conversation: newConversation(),
      emit: (_source, event) => events.push(event),
      context: {},
    }).catch((error: unknown) => error);
    expect(JSON.stringify(events)).toContain('llm_call_failed');
    expect(JSON.stringify(events)).not.toContain('PLANTED');
    expect((failure as Error).message).not.toContain('PLANTED');
  });
});
