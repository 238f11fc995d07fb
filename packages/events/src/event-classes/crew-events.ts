// Tasks, crews and agents: a crew's run, the tasks it runs and the agents that execute them.
import { defineEvent } from '../base-event.js';
import type { TokenUsageRecord } from './llm-events.js';

export class TaskStartedEvent extends defineEvent<'task_started', { description: string }>('task_started') {}
export class TaskCompletedEvent extends defineEvent<
  'task_completed',
  { description: string; output: string }
>('task_completed') {}
export class TaskFailedEvent extends defineEvent<'task_failed', { description: string; error: string }>(
  'task_failed',
) {}
export class TaskEvaluationEvent extends defineEvent('task_evaluation') {}
export class CrewKickoffStartedEvent extends defineEvent<
  'crew_kickoff_started',
  { crewName: string; inputs: Record<string, unknown> }
>('crew_kickoff_started') {}
export class CrewKickoffCompletedEvent extends defineEvent<
  'crew_kickoff_completed',
  { crewName: string; output: string; tokenUsage?: TokenUsageRecord }
>('crew_kickoff_completed') {}
export class CrewKickoffFailedEvent extends defineEvent<
  'crew_kickoff_failed',
  { crewName: string; error: string }
>('crew_kickoff_failed') {}
export class CrewTrainStartedEvent extends defineEvent('crew_train_started') {}
export class CrewTrainCompletedEvent extends defineEvent('crew_train_completed') {}
export class CrewTrainFailedEvent extends defineEvent('crew_train_failed') {}
export class CrewTestStartedEvent extends defineEvent('crew_test_started') {}
export class CrewTestCompletedEvent extends defineEvent('crew_test_completed') {}
export class CrewTestFailedEvent extends defineEvent('crew_test_failed') {}
export class CrewTestResultEvent extends defineEvent('crew_test_result') {}
export class AgentExecutionStartedEvent extends defineEvent<
  'agent_execution_started',
  { role: string; taskDescription?: string }
>('agent_execution_started') {}
export class AgentExecutionCompletedEvent extends defineEvent<
  'agent_execution_completed',
  { role: string; output: string }
>('agent_execution_completed') {}
export class AgentExecutionErrorEvent extends defineEvent<
  'agent_execution_error',
  { role: string; error: string }
>('agent_execution_error') {}
export class LiteAgentExecutionStartedEvent extends defineEvent<
  'lite_agent_execution_started',
  { role: string; messages?: unknown[] }
>('lite_agent_execution_started') {}
export class LiteAgentExecutionCompletedEvent extends defineEvent<
  'lite_agent_execution_completed',
  { role: string; output: string }
>('lite_agent_execution_completed') {}
export class LiteAgentExecutionErrorEvent extends defineEvent<
  'lite_agent_execution_error',
  { role: string; error: string }
>('lite_agent_execution_error') {}
export class AgentEvaluationStartedEvent extends defineEvent('agent_evaluation_started') {}
export class AgentEvaluationCompletedEvent extends defineEvent('agent_evaluation_completed') {}
export class AgentEvaluationFailedEvent extends defineEvent('agent_evaluation_failed') {}
