import {
  type BaseEvent,
  type EventContext,
  type EventSource,
  ToolSelectionErrorEvent,
  ToolUsageErrorEvent,
  ToolUsageFinishedEvent,
  ToolUsageStartedEvent,
  ToolValidateInputErrorEvent,
} from '@crewline/events';
import type { JSONValue, ToolCallPart, ToolModelMessage, ToolResultPart } from 'ai';
import type { CrewlineTool } from '../tools/define-tool.js';
import { runTool } from '../tools/run-tool.js';
import type { Conversation } from './conversation.js';

export interface ToolStepInput {
  conversation: Conversation;
  tools: Record<string, CrewlineTool>;
  emit: (source: unknown, event: BaseEvent) => void;
  context: EventContext;
  abortSignal: AbortSignal | undefined;
  /** Errors of calls whose input the AI SDK could not parse (only known in the process that made the call). */
  unparsableToolCalls: Map<string, string>;
  /** Awaited after `tool_usage_started`, before the tool runs (see the agent loop's `beforeCall`). */
  beforeCall?: (() => Promise<void>) | undefined;
}

function toolSource(toolName: string): EventSource {
  return { kind: 'tool', id: toolName, name: toolName };
}

/** Adds a result to the tool message that follows the assistant turn, creating it when needed. */
function appendResult(conversation: Conversation, part: ToolResultPart): void {
  const last = conversation.messages[conversation.messages.length - 1];
  if (last?.role === 'tool') {
    (last as ToolModelMessage).content.push(part);
  } else {
    conversation.messages.push({ role: 'tool', content: [part] });
  }
}

function outputOf(value: unknown): ToolResultPart['output'] {
  return typeof value === 'string'
    ? { type: 'text', value }
    : { type: 'json', value: (value ?? null) as JSONValue };
}

/**
 * Runs tool calls that have no result yet, in order. Each result (or error) is appended to the
 * conversation before its event is emitted, so a checkpoint on `tool_usage_finished` never runs that
 * tool again. Failures of every kind become results the model reads; only an abort inside a tool is
 * thrown, leaving that call without a result so that a resume runs it again.
 */
export async function runPendingTools(calls: ToolCallPart[], input: ToolStepInput): Promise<void> {
  const { conversation, tools, emit, context } = input;
  const names = Object.keys(tools);
  for (const call of calls) {
    // Stop between tools; the loop reports the abort and a resume runs the remaining calls.
    if (input.abortSignal?.aborted) return;
    const { toolCallId, toolName } = call;
    const source = toolSource(toolName);
    const unparsable = input.unparsableToolCalls.get(toolCallId);
    input.unparsableToolCalls.delete(toolCallId);
    const outcome =
      unparsable !== undefined && tools[toolName] !== undefined
        ? { status: 'invalid_input' as const, message: `invalid input for tool "${toolName}": ${unparsable}` }
        : await runTool(
            toolName,
            tools[toolName],
            call.input,
            { toolCallId, messages: conversation.messages, abortSignal: input.abortSignal },
            names,
            (validInput) => {
              emit(
                source,
                new ToolUsageStartedEvent({ toolName, toolCallId, args: validInput, source, context }),
              );
              return input.beforeCall?.();
            },
          );
    switch (outcome.status) {
      case 'succeeded':
        appendResult(conversation, {
          type: 'tool-result',
          toolCallId,
          toolName,
          output: outputOf(outcome.output),
        });
        emit(
          source,
          new ToolUsageFinishedEvent({ toolName, toolCallId, result: outcome.output, source, context }),
        );
        break;
      default: {
        // Every failure goes back to the model as an error result; only the event says which kind.
        const ErrorEvent = errorEventFor[outcome.status];
        appendResult(conversation, {
          type: 'tool-result',
          toolCallId,
          toolName,
          output: { type: 'error-text', value: outcome.message },
        });
        emit(source, new ErrorEvent({ toolName, toolCallId, error: outcome.message, source, context }));
        break;
      }
    }
  }
}

const errorEventFor = {
  unknown_tool: ToolSelectionErrorEvent,
  invalid_input: ToolValidateInputErrorEvent,
  failed: ToolUsageErrorEvent,
} as const;
