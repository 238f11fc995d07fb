// Tool calls: each use of a tool and the ways one can fail.
import { defineEvent } from '../base-event.js';

export class ToolUsageStartedEvent extends defineEvent<
  'tool_usage_started',
  { toolName: string; toolCallId: string; args: unknown }
>('tool_usage_started') {}
export class ToolUsageFinishedEvent extends defineEvent<
  'tool_usage_finished',
  { toolName: string; toolCallId: string; result: unknown }
>('tool_usage_finished') {}
export class ToolUsageErrorEvent extends defineEvent<
  'tool_usage_error',
  { toolName: string; toolCallId: string; error: string }
>('tool_usage_error') {}
export class ToolValidateInputErrorEvent extends defineEvent<
  'tool_validate_input_error',
  { toolName: string; toolCallId: string; error: string }
>('tool_validate_input_error') {}
export class ToolSelectionErrorEvent extends defineEvent<
  'tool_selection_error',
  { toolName: string; toolCallId: string; error: string }
>('tool_selection_error') {}
export class ToolExecutionErrorEvent extends defineEvent<
  'tool_execution_error',
  { toolName: string; toolCallId: string; error: string }
>('tool_execution_error') {}
