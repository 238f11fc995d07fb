import type { JsonObject, JsonValue, SettledValues } from '@crewline/runtime-state';
import { redactSecrets } from '@crewline/runtime-state';
import { type Conversation, emptyUsage } from '../agent-loop/conversation.js';

/**
 * Settles a part of a snapshot that will not change again in the run the snapshot is for (see
 * `SettledValues`): redacted once, stored once. Without a run (a snapshot read for an edit, say)
 * the part is only redacted.
 */
export type Settle = <T>(value: T) => T;

export function settlerOf(settled: SettledValues | undefined): Settle {
  return settled === undefined ? (value) => redactSecrets(value) : (value) => settled.settle(value);
}

/** Below this depth a message is copied; deeper, its objects are kept (and count as changed). */
const COPIED_MESSAGE_DEPTH = 16;

/** A copy of the plain objects and arrays in `value` down to {@link COPIED_MESSAGE_DEPTH}. */
function copyMessagePart(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth >= COPIED_MESSAGE_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => copyMessagePart(item, depth + 1));
  // A class instance (a file part's bytes, say) is kept as it is.
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    Object.defineProperty(copy, key, {
      value: copyMessagePart((value as Record<string, unknown>)[key], depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return copy;
}

/**
 * A conversation as stored: a copy of the message list and of its last message (its parts too,
 * which a tool step may still append to), so that a provider writing in the background stores the
 * state at the event, not a later one. The copy also makes the snapshot the entity's own: a live
 * last message, met again in the next snapshot, counted as changed (it may have been changed in
 * place), so a running crew's snapshot never came back unchanged, and was compared, redacted and
 * stored again on every event, even on one that changed nothing in it (a model call or tool
 * starting: a third of a run's events).
 */
export function storeConversation(conversation: Conversation | undefined, settle: Settle): JsonValue {
  if (!conversation) return null;
  // The agent loop only ever appends to a conversation (the last message may still gain tool
  // results), so every message before the last is final: settled, redacted once for the run.
  const messages = conversation.messages.map((message, index, all) =>
    index < all.length - 1 ? settle(message) : message,
  );
  const last = messages[messages.length - 1];
  if (last) messages[messages.length - 1] = copyMessagePart(last, 0) as typeof last;
  const stored: JsonObject = {
    messages: messages as unknown as JsonValue,
    llmCalls: conversation.llmCalls,
    finished: conversation.finished,
    usage: { ...conversation.usage },
  };
  if (conversation.output !== undefined) stored.output = conversation.output;
  if (conversation.structuredOutputRetries !== undefined)
    stored.structuredOutputRetries = conversation.structuredOutputRetries;
  return stored;
}

/** Reads a stored conversation back (a fresh copy the run may mutate). */
export function restoreConversation(stored: JsonValue | undefined): Conversation | undefined {
  if (stored === null || stored === undefined || typeof stored !== 'object' || Array.isArray(stored))
    return undefined;
  const copy = structuredClone(stored) as unknown as Conversation;
  if (!Array.isArray(copy.messages)) return undefined;
  copy.llmCalls = typeof copy.llmCalls === 'number' ? copy.llmCalls : 0;
  copy.finished = copy.finished === true;
  copy.usage = { ...emptyUsage(), ...(copy.usage ?? {}) };
  return copy;
}
