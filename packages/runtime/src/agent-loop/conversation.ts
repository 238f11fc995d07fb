import type { AssistantModelMessage, ModelMessage, ToolCallPart, ToolModelMessage } from 'ai';

/** Token counts of one call or summed over a conversation. `cachedInputTokens` is part of `inputTokens`. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Input tokens the provider read from its prompt cache (Anthropic cache reads, OpenAI cached tokens). */
  cachedInputTokens: number;
}

/**
 * One agent's conversation on one task. Plain JSON-safe data, stored inside checkpoints as is, so a
 * resumed run continues exactly where the saved one stopped.
 */
export interface Conversation {
  /** Everything after the system prompt, in order. */
  messages: ModelMessage[];
  /** Completed LLM calls in this conversation. */
  llmCalls: number;
  finished: boolean;
  /** The final answer text once finished. */
  output?: string;
  usage: TokenUsage;
  /**
   * How many times the model was asked again because its final answer did not match the output
   * schema (at most once). Absent means zero.
   */
  structuredOutputRetries?: number;
}

export function emptyUsage(): TokenUsage {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedInputTokens: 0 };
}

export function newConversation(): Conversation {
  return { messages: [], llmCalls: 0, finished: false, usage: emptyUsage() };
}

/** Adds `addition` into `total` in place and returns `total`. */
export function addUsage(total: TokenUsage, addition: TokenUsage): TokenUsage {
  total.inputTokens += addition.inputTokens;
  total.outputTokens += addition.outputTokens;
  total.totalTokens += addition.totalTokens;
  total.cachedInputTokens += addition.cachedInputTokens;
  return total;
}

/** The sum of several usages (a crew's total from its tasks, for example). */
export function sumUsage(usages: Iterable<TokenUsage>): TokenUsage {
  const total = emptyUsage();
  for (const usage of usages) addUsage(total, usage);
  return total;
}

/**
 * Tool calls of the last assistant message that have no result yet. A conversation saved between a
 * model call and its tool results ends like this; the loop runs these tools before calling the model.
 */
export function pendingToolCalls(conversation: Pick<Conversation, 'messages'>): ToolCallPart[] {
  const { messages } = conversation;
  let assistantIndex = messages.length - 1;
  while (assistantIndex >= 0 && messages[assistantIndex]!.role === 'tool') assistantIndex -= 1;
  const assistant = messages[assistantIndex];
  if (assistant?.role !== 'assistant' || typeof assistant.content === 'string') return [];
  const answered = new Set<string>();
  for (const message of messages.slice(assistantIndex + 1) as ToolModelMessage[]) {
    for (const part of message.content) if (part.type === 'tool-result') answered.add(part.toolCallId);
  }
  return (assistant as AssistantModelMessage & { content: unknown[] }).content.filter(
    (part): part is ToolCallPart =>
      (part as ToolCallPart).type === 'tool-call' &&
      !(part as ToolCallPart).providerExecuted &&
      !answered.has((part as ToolCallPart).toolCallId),
  );
}
