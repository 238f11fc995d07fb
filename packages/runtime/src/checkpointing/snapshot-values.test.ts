import { EventBus } from '@crewline/events';
import { type EntitySnapshot, RuntimeState, SettledValues } from '@crewline/runtime-state';
import type { CrewData } from '@crewline/runtime-state/internal';
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { Conversation } from '../agent-loop/conversation.js';
import { emptyUsage } from '../agent-loop/conversation.js';
import { threeTaskCrew } from '../e2e/support/fixtures.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { storeConversation } from './snapshot-values.js';

function conversationWith(messages: ModelMessage[]): Conversation {
  return { messages, llmCalls: 1, finished: false, usage: emptyUsage() };
}

function storedMessages(stored: unknown): ModelMessage[] {
  return (stored as { messages: ModelMessage[] }).messages;
}

describe('a stored conversation', () => {
  it('holds its last message as it was: a change in place after the snapshot is stored by the next one', () => {
    const settled = new SettledValues();
    const call = {
      type: 'tool-call' as const,
      toolCallId: 'call-1',
      toolName: 'notes',
      input: { subject: 'tides' },
    };
    const conversation = conversationWith([
      { role: 'system', content: 'You research.' },
      { role: 'assistant', content: [call] },
    ]);
    const before = storedMessages(storeConversation(conversation, (value) => settled.settle(value)));
    call.input.subject = 'waves';
    (conversation.messages[1]!.content as unknown[]).push({ type: 'text', text: 'more' });
    expect(before[1]).toEqual({ role: 'assistant', content: [{ ...call, input: { subject: 'tides' } }] });
    const after = storedMessages(storeConversation(conversation, (value) => settled.settle(value)));
    expect(after[1]).toEqual({
      role: 'assistant',
      content: [
        { ...call, input: { subject: 'waves' } },
        { type: 'text', text: 'more' },
      ],
    });
  });
});

describe("a running crew's snapshot", () => {
  function runningCrew() {
    const { crew } = threeTaskCrew(offlineModel(), { checkpoint: false });
    const task = crew.tasks[0]!;
    task.status = 'running';
    task.startedEmitted = true;
    const result = {
      type: 'tool-result' as const,
      toolCallId: 'call-1',
      toolName: 'lookup',
      output: { type: 'json' as const, value: { found: ['a'] } },
    };
    task.conversation = conversationWith([
      { role: 'system', content: 'You research.' },
      { role: 'user', content: 'Research AI' },
      { role: 'tool', content: [result] },
    ]);
    const state = new RuntimeState({ entities: [crew], bus: new EventBus() });
    return { state, result };
  }

  function lastMessageOf(entity: EntitySnapshot): unknown {
    const task = (entity.data as unknown as CrewData).tasks[0]!;
    return (task.conversation as { messages: unknown[] }).messages.at(-1);
  }

  it('comes back unchanged, the same redacted object, when nothing changed since the last one', () => {
    const { state } = runningCrew();
    const first = state.snapshot().entities[0]!;
    const second = state.snapshot().entities[0]!;
    expect(second).toBe(first);
    expect(state.settled.has(second)).toBe(true);
  });

  it('holds a tool result changed in place after an unchanged snapshot', () => {
    const { state, result } = runningCrew();
    state.snapshot();
    state.snapshot();
    (result.output.value.found as string[]).push('b');
    const changed = state.snapshot().entities[0]!;
    expect(lastMessageOf(changed)).toEqual({
      role: 'tool',
      content: [{ ...result, output: { type: 'json', value: { found: ['a', 'b'] } } }],
    });
  });
});
