// Model calls: each call, its streamed chunks, and the guardrails on its answer.
import { defineEvent } from '../base-event.js';

/** Token counts of one LLM call or a whole run. */
export interface TokenUsageRecord {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cachedInputTokens?: number;
}

export class LLMCallStartedEvent extends defineEvent<
  'llm_call_started',
  { model: string; callId: string; messageCount: number }
>('llm_call_started') {}
export class LLMCallCompletedEvent extends defineEvent<
  'llm_call_completed',
  {
    model: string;
    /** The AI SDK provider of the model that answered (`openai.chat`, `offline`), when known. */
    provider?: string;
    callId: string;
    response: string;
    toolCalls?: { toolName: string; toolCallId: string }[];
    usage?: TokenUsageRecord;
  }
>('llm_call_completed') {}
export class LLMCallFailedEvent extends defineEvent<
  'llm_call_failed',
  { model: string; callId: string; error: string }
>('llm_call_failed') {}
export class LLMStreamChunkEvent extends defineEvent<'llm_stream_chunk', { callId: string; chunk: string }>(
  'llm_stream_chunk',
) {}
export class LLMThinkingChunkEvent extends defineEvent<
  'llm_thinking_chunk',
  { callId: string; chunk: string }
>('llm_thinking_chunk') {}
export class LLMGuardrailStartedEvent extends defineEvent('llm_guardrail_started') {}
export class LLMGuardrailCompletedEvent extends defineEvent('llm_guardrail_completed') {}
export class LLMGuardrailFailedEvent extends defineEvent('llm_guardrail_failed') {}
