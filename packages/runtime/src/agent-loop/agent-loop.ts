import { type BaseEvent, CrewlineError, type EventContext } from '@crewline/events';
import { type SystemModelMessage, type TelemetrySettings, ToolChoiceViolationError } from 'ai';
import type { z } from 'zod';
import { registerModelCredentials } from '../models/model-credentials.js';
import type { LanguageModelObject, ModelInput } from '../models/model-id.js';
import { type ModelRegistry, resolveModel } from '../models/resolve-model.js';
import type { CrewlineTool } from '../tools/define-tool.js';
import { toModelTools } from '../tools/model-tools.js';
import { FINAL_ANSWER_REQUEST } from './control-messages.js';
import { type Conversation, pendingToolCalls, type TokenUsage } from './conversation.js';
import { type ModelCallSettings, modelStep } from './model-step.js';
import { correctionMessage, parseStructuredOutput } from './structured-output.js';
import { runPendingTools } from './tool-step.js';

/** Default number of LLM calls one conversation may make. */
export const DEFAULT_MAX_ITERATIONS = 25;

export interface AgentLoopOptions {
  /** An AI SDK v6 model, or a `provider:model` id resolved with {@link resolveModel}. */
  model: ModelInput;
  /** The `provider:model` id put on LLM events. */
  modelId: string;
  /**
   * The system prompt. Pass `systemPromptFor(model, text)` to carry Anthropic cache control; an array
   * of system messages keeps separate cache blocks (see `systemPromptFor`'s `splitAt`).
   */
  system: string | SystemModelMessage | SystemModelMessage[];
  /** The user message that starts the conversation when it is empty. */
  prompt: string;
  /** Mutated in place; may already hold messages (resume). */
  conversation: Conversation;
  /** Tools the model may call, by name. Default: none. */
  tools?: Record<string, CrewlineTool>;
  /**
   * Most LLM calls in this conversation. With tools, the last allowed call asks for the best final
   * answer with tools disabled; if even that gives no answer (or a structured answer stays invalid),
   * the loop throws a `model_error`. Default `25`.
   */
  maxIterations?: number;
  /** Structured output: the final answer must be JSON that this schema accepts; asked again once. */
  outputSchema?: z.ZodType;
  /** Emits inside the run (the caller binds the run). */
  emit: (source: unknown, event: BaseEvent) => void;
  /**
   * Awaited right before each model call and each tool execution, after its started event: the run
   * makes every checkpoint written so far durable (`state.durable()`), so that a completion a
   * checkpoint holds is never paid for again after a crash. Default: nothing to wait for.
   */
  beforeCall?: () => Promise<void>;
  /** Task and agent ids put on every event. */
  context: EventContext;
  /** Stops the loop between steps and cancels the model call and tools in flight. */
  abortSignal?: AbortSignal;
  /** Per-call settings (temperature, maxOutputTokens, providerOptions…). Default: the provider's. */
  settings?: ModelCallSettings;
  /** AI SDK telemetry for every model call (`experimental_telemetry`). Default: none. */
  telemetry?: TelemetrySettings;
  /** Retries of one model call on errors the AI SDK deems transient (rate limits, 5xx). Default `2`. */
  maxRetries?: number;
  /** Registered models, used when `model` is an id string. Default: none. */
  models?: ModelRegistry;
}

export interface AgentLoopResult {
  output: string;
  /** The validated value when `outputSchema` was given. */
  structured?: unknown;
  /** Usage of the whole conversation (earlier, resumed calls included). */
  usage: TokenUsage;
}

function abortedError(signal: AbortSignal): CrewlineError {
  return new CrewlineError(
    'agent-loop',
    'aborted',
    'the agent loop was aborted before it finished; resume from the last checkpoint to continue',
    {
      cause: signal.reason,
    },
  );
}

function finish(
  conversation: Conversation,
  output: string,
  structured: unknown,
  hasSchema: boolean,
): AgentLoopResult {
  conversation.finished = true;
  conversation.output = output;
  return { output, ...(hasSchema ? { structured } : {}), usage: { ...conversation.usage } };
}

function assistantText(message: Conversation['messages'][number]): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function hasToolCalls(message: Conversation['messages'][number]): boolean {
  return typeof message.content !== 'string' && message.content.some((part) => part.type === 'tool-call');
}

/**
 * Runs one agent on one task: model call, tool calls, model call… until a final answer. Every step is
 * recorded in `conversation` before its event is emitted, and the loop continues from whatever the
 * conversation holds: pending tool calls run first, a saved final answer is returned without a call.
 */
export async function runAgentLoop(options: AgentLoopOptions): Promise<AgentLoopResult> {
  const { conversation, outputSchema, abortSignal } = options;
  const maxIterations = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  if (!Number.isInteger(maxIterations) || maxIterations < 1) {
    throw new CrewlineError(
      'agent-loop',
      'invalid_argument',
      `maxIterations must be a whole number of at least 1, got ${String(maxIterations)}`,
    );
  }
  const hasSchema = outputSchema !== undefined;
  if (conversation.finished) {
    const output = conversation.output ?? '';
    const parsed = outputSchema ? parseStructuredOutput(output, outputSchema) : undefined;
    return {
      output,
      ...(hasSchema ? { structured: parsed?.success ? parsed.value : undefined } : {}),
      usage: { ...conversation.usage },
    };
  }
  if (conversation.messages.length === 0)
    conversation.messages.push({ role: 'user', content: options.prompt });
  const model: LanguageModelObject =
    typeof options.model === 'string'
      ? resolveModel(options.model, options.models ? { models: options.models } : {})
      : options.model;
  registerModelCredentials(model);
  const tools = options.tools ?? {};
  const modelTools = Object.keys(tools).length > 0 ? toModelTools(tools) : undefined;
  const unparsableToolCalls = new Map<string, string>();
  const step = {
    model,
    modelId: options.modelId,
    system: options.system,
    conversation,
    tools: modelTools,
    outputSchema,
    settings: options.settings,
    telemetry: options.telemetry,
    maxRetries: options.maxRetries ?? 2,
    emit: options.emit,
    context: options.context,
    abortSignal,
    unparsableToolCalls,
    beforeCall: options.beforeCall,
  };

  for (;;) {
    if (abortSignal?.aborted) throw abortedError(abortSignal);
    const pending = pendingToolCalls(conversation);
    if (pending.length > 0) {
      try {
        await runPendingTools(pending, {
          conversation,
          tools,
          emit: options.emit,
          context: options.context,
          abortSignal,
          unparsableToolCalls,
          beforeCall: options.beforeCall,
        });
      } catch (error) {
        // Only aborts leave runPendingTools; the interrupted call stays pending for a resume.
        if (CrewlineError.hasCode(error, 'aborted')) throw error;
        throw new CrewlineError(
          'agent-loop',
          'aborted',
          'a tool was aborted before it finished; resume from the last checkpoint to run it again',
          { cause: error },
        );
      }
      continue;
    }
    const last = conversation.messages[conversation.messages.length - 1]!;
    if (last.role === 'assistant' && !hasToolCalls(last)) {
      // A final answer, fresh or restored from a checkpoint taken right after the call.
      const text = assistantText(last);
      if (!outputSchema) return finish(conversation, text, undefined, false);
      const parsed = parseStructuredOutput(text, outputSchema);
      if (parsed.success) return finish(conversation, text, parsed.value, true);
      const retries = conversation.structuredOutputRetries ?? 0;
      if (retries >= 1 || conversation.llmCalls >= maxIterations) {
        throw new CrewlineError(
          'agent-loop',
          'model_error',
          `model "${options.modelId}" did not give a final answer that matches the output schema (${parsed.reason}), even after being asked again; simplify the schema or use a model with structured-output support`,
          { details: { modelId: options.modelId, output: text.slice(0, 2000) } },
        );
      }
      conversation.structuredOutputRetries = retries + 1;
      conversation.messages.push({ role: 'user', content: correctionMessage(parsed.reason, outputSchema) });
      continue;
    }
    if (conversation.llmCalls >= maxIterations) {
      throw new CrewlineError(
        'agent-loop',
        'model_error',
        `model "${options.modelId}" made ${conversation.llmCalls} calls without a final answer (maxIterations ${maxIterations}); raise maxIterations or simplify the task`,
        { details: { modelId: options.modelId, maxIterations } },
      );
    }
    const lastAllowed = modelTools !== undefined && conversation.llmCalls === maxIterations - 1;
    if (lastAllowed && last.role === 'tool')
      conversation.messages.push({ role: 'user', content: FINAL_ANSWER_REQUEST });
    // Tools stay declared on the last call (providers reject tool results without tool definitions)
    // but the model may not call them.
    try {
      await modelStep({ ...step, toolChoice: lastAllowed ? 'none' : undefined });
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      if (lastAllowed && ToolChoiceViolationError.isInstance(cause)) {
        throw new CrewlineError(
          'agent-loop',
          'model_error',
          `model "${options.modelId}" kept calling tools on its last allowed call (maxIterations ${maxIterations}) instead of giving a final answer; raise maxIterations or simplify the task`,
          { cause: error, details: { modelId: options.modelId, maxIterations } },
        );
      }
      throw error;
    }
  }
}
