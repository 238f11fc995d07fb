import { randomUUID } from 'node:crypto';
import {
  type BaseEvent,
  CrewlineError,
  type EventContext,
  type EventSource,
  LLMCallCompletedEvent,
  LLMCallFailedEvent,
  LLMCallStartedEvent,
  redactSecretsInText,
} from '@crewline/events';
import {
  generateText,
  type LanguageModelUsage,
  type ModelMessage,
  type ProviderMetadata,
  type SystemModelMessage,
  type TelemetrySettings,
  type ToolCallPart,
  type ToolChoice,
  type ToolSet,
} from 'ai';
import type { z } from 'zod';
import type { LanguageModelObject } from '../models/model-id.js';
import { addUsage, type Conversation, type TokenUsage } from './conversation.js';
import { plainJson } from './plain-json.js';
import { jsonResponseOutput } from './structured-output.js';

/** Per-call generation settings, passed on every call (they never change the model object). */
export interface ModelCallSettings {
  /** Default: the provider's. */
  maxOutputTokens?: number;
  /** Default: the provider's. */
  temperature?: number;
  topP?: number;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  stopSequences?: string[];
  seed?: number;
  /** Provider-specific options, e.g. `{ openai: { reasoningEffort: 'low' } }`. */
  providerOptions?: ProviderMetadata;
}

export interface ModelStepInput {
  model: LanguageModelObject;
  modelId: string;
  system: string | SystemModelMessage | SystemModelMessage[] | undefined;
  conversation: Conversation;
  tools: ToolSet | undefined;
  toolChoice: ToolChoice<ToolSet> | undefined;
  outputSchema: z.ZodType | undefined;
  settings: ModelCallSettings | undefined;
  /** AI SDK telemetry for the call (`experimental_telemetry`); never stored. */
  telemetry?: TelemetrySettings | undefined;
  maxRetries: number;
  emit: (source: unknown, event: BaseEvent) => void;
  context: EventContext;
  abortSignal: AbortSignal | undefined;
  /** Filled with the errors of tool calls the AI SDK could not parse, by tool call id. */
  unparsableToolCalls?: Map<string, string>;
  /** Awaited after `llm_call_started`, before the call is sent (see the agent loop's `beforeCall`). */
  beforeCall?: (() => Promise<void>) | undefined;
}

export interface ModelStepResult {
  text: string;
  toolCalls: ToolCallPart[];
  usage: TokenUsage;
}

/** Our usage shape from the AI SDK's; cache reads come from the detailed counts when the provider gives them. */
export function usageFrom(usage: LanguageModelUsage | undefined): TokenUsage {
  const inputTokens = usage?.inputTokens ?? 0;
  const outputTokens = usage?.outputTokens ?? 0;
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage?.totalTokens ?? inputTokens + outputTokens,
    cachedInputTokens: usage?.inputTokenDetails?.cacheReadTokens ?? usage?.cachedInputTokens ?? 0,
  };
}

export function errorText(error: unknown): string {
  return redactSecretsInText(error instanceof Error ? error.message : String(error));
}

/** The source of LLM events: a plain descriptor, never the model object (which may hold credentials). */
export function llmSource(modelId: string): EventSource {
  return { kind: 'llm', id: modelId, name: modelId };
}

/**
 * Makes exactly one model call. The response is appended to the conversation and counted before
 * `llm_call_completed` is emitted: a checkpoint taken on that event already holds the answer, so a
 * resumed run never pays for the call again.
 */
export async function modelStep(input: ModelStepInput): Promise<ModelStepResult> {
  const { conversation, modelId, emit, context } = input;
  const callId = randomUUID();
  const source = llmSource(modelId);
  emit(
    source,
    new LLMCallStartedEvent({
      model: modelId,
      callId,
      messageCount: conversation.messages.length,
      source,
      context,
    }),
  );
  // Every checkpoint written so far is durable before anything more is paid for.
  await input.beforeCall?.();
  let result: Awaited<ReturnType<typeof generateText>>;
  try {
    result = await generateText({
      model: input.model,
      ...(input.system === undefined ? {} : { system: input.system }),
      messages: conversation.messages,
      ...(input.tools ? { tools: input.tools } : {}),
      ...(input.tools && input.toolChoice ? { toolChoice: input.toolChoice } : {}),
      ...(input.outputSchema ? { output: jsonResponseOutput(input.outputSchema) } : {}),
      ...input.settings,
      ...(input.telemetry ? { experimental_telemetry: input.telemetry } : {}),
      maxRetries: input.maxRetries,
      ...(input.abortSignal ? { abortSignal: input.abortSignal } : {}),
    });
  } catch (error) {
    const message = errorText(error);
    emit(source, new LLMCallFailedEvent({ model: modelId, callId, error: message, source, context }));
    if (input.abortSignal?.aborted) {
      throw new CrewlineError('agent-loop', 'aborted', `the call to model "${modelId}" was aborted`, {
        cause: error,
      });
    }
    throw new CrewlineError(
      'agent-loop',
      'model_error',
      `the call to model "${modelId}" failed: ${message}`,
      {
        cause: error,
        details: { modelId, callId },
      },
    );
  }
  const assistant = result.response.messages.filter((message: ModelMessage) => message.role === 'assistant');
  // An empty answer still takes a turn, so the conversation shows the call was made and paid for.
  conversation.messages.push(
    ...(assistant.length > 0 ? plainJson(assistant) : [{ role: 'assistant' as const, content: '' }]),
  );
  conversation.llmCalls += 1;
  const usage = usageFrom(result.usage);
  addUsage(conversation.usage, usage);
  const toolCalls: ToolCallPart[] = result.toolCalls.map((call) => ({
    type: 'tool-call',
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    input: call.input,
  }));
  for (const call of result.toolCalls) {
    if ('invalid' in call && call.invalid && input.unparsableToolCalls) {
      input.unparsableToolCalls.set(call.toolCallId, errorText(call.error));
    }
  }
  emit(
    source,
    new LLMCallCompletedEvent({
      model: modelId,
      // Lets cost reports recognise the offline model under any name a project registers it by.
      provider: input.model.provider,
      callId,
      response: result.text,
      toolCalls: toolCalls.map((call) => ({ toolName: call.toolName, toolCallId: call.toolCallId })),
      usage: { ...usage },
      source,
      context,
    }),
  );
  return { text: result.text, toolCalls, usage };
}
