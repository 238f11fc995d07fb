import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { addUsage, emptyUsage, newConversation, pendingToolCalls, sumUsage } from './conversation.js';

const call = (id: string, extra: object = {}) => ({
  type: 'tool-call' as const,
  toolCallId: id,
  toolName: 'search',
  input: {},
  ...extra,
});
const result = (id: string) => ({
  type: 'tool-result' as const,
  toolCallId: id,
  toolName: 'search',
  output: { type: 'text' as const, value: 'ok' },
});

describe('pendingToolCalls', () => {
  it('lists the last assistant turn’s calls that have no result yet', () => {
    const messages: ModelMessage[] = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'looking' },
          call('a'),
          call('b'),
          call('c', { providerExecuted: true }),
        ],
      },
      { role: 'tool', content: [result('a')] },
    ];
    expect(pendingToolCalls({ messages }).map((part) => part.toolCallId)).toEqual(['b']);
  });

  it('finds nothing after a final answer, a user message, or when every call has a result', () => {
    expect(pendingToolCalls(newConversation())).toEqual([]);
    expect(pendingToolCalls({ messages: [{ role: 'user', content: 'x' }] })).toEqual([]);
    expect(pendingToolCalls({ messages: [{ role: 'assistant', content: 'final' }] })).toEqual([]);
    const answered: ModelMessage[] = [
      { role: 'assistant', content: [call('a')] },
      { role: 'tool', content: [result('a')] },
    ];
    expect(pendingToolCalls({ messages: answered })).toEqual([]);
    // An older turn's unanswered call does not count once a newer user message follows.
    expect(
      pendingToolCalls({ messages: [...answered.slice(0, 1), { role: 'user', content: 'next' }] }),
    ).toEqual([]);
  });
});

describe('usage', () => {
  it('adds and sums usages, cached input tokens included', () => {
    const one = { inputTokens: 10, outputTokens: 2, totalTokens: 12, cachedInputTokens: 4 };
    expect(addUsage(emptyUsage(), one)).toEqual(one);
    expect(sumUsage([one, one, emptyUsage()])).toEqual({
      inputTokens: 20,
      outputTokens: 4,
      totalTokens: 24,
      cachedInputTokens: 8,
    });
  });
});
