// Flows: a flow's run, its methods, and the human feedback and input it asks for.
import { defineEvent } from '../base-event.js';

export class FlowCreatedEvent extends defineEvent<'flow_created', { flowName: string }>('flow_created') {}
export class FlowStartedEvent extends defineEvent<
  'flow_started',
  { flowName: string; inputs?: Record<string, unknown> }
>('flow_started') {}
export class FlowFinishedEvent extends defineEvent<'flow_finished', { flowName: string; result?: unknown }>(
  'flow_finished',
) {}
export class FlowPausedEvent extends defineEvent<
  'flow_paused',
  { flowName: string; methodName: string; message: string }
>('flow_paused') {}
export class MethodExecutionStartedEvent extends defineEvent<
  'method_execution_started',
  { flowName: string; methodName: string }
>('method_execution_started') {}
export class MethodExecutionFinishedEvent extends defineEvent<
  'method_execution_finished',
  { flowName: string; methodName: string; output?: unknown }
>('method_execution_finished') {}
export class MethodExecutionFailedEvent extends defineEvent<
  'method_execution_failed',
  { flowName: string; methodName: string; error: string }
>('method_execution_failed') {}
export class MethodExecutionPausedEvent extends defineEvent<
  'method_execution_paused',
  { flowName: string; methodName: string; message: string }
>('method_execution_paused') {}
export class HumanFeedbackRequestedEvent extends defineEvent<
  'human_feedback_requested',
  { flowName: string; methodName: string; message: string }
>('human_feedback_requested') {}
export class HumanFeedbackReceivedEvent extends defineEvent<
  'human_feedback_received',
  { flowName: string; methodName: string; feedback: string }
>('human_feedback_received') {}
export class FlowInputRequestedEvent extends defineEvent<
  'flow_input_requested',
  { flowName: string; methodName: string; message: string }
>('flow_input_requested') {}
export class FlowInputReceivedEvent extends defineEvent<
  'flow_input_received',
  { flowName: string; methodName: string; value: string }
>('flow_input_received') {}
