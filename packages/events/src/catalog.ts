// Generated from event-types.ts: one class per catalog type. Payloads the runtime emits are typed.
import { defineEvent } from './base-event.js';

/** Token counts of one LLM call or a whole run. */
export interface TokenUsageRecord {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cachedInputTokens?: number;
}

export interface SignalPayload {
  signal: string;
  signalNumber?: number;
  reason?: string;
}

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
export class MemorySaveStartedEvent extends defineEvent<'memory_save_started', { value: string }>(
  'memory_save_started',
) {}
export class MemorySaveCompletedEvent extends defineEvent<'memory_save_completed', { value: string }>(
  'memory_save_completed',
) {}
export class MemorySaveFailedEvent extends defineEvent<'memory_save_failed', { error: string }>(
  'memory_save_failed',
) {}
export class MemoryQueryStartedEvent extends defineEvent<'memory_query_started', { query: string }>(
  'memory_query_started',
) {}
export class MemoryQueryCompletedEvent extends defineEvent<
  'memory_query_completed',
  { query: string; results: string[] }
>('memory_query_completed') {}
export class MemoryQueryFailedEvent extends defineEvent<
  'memory_query_failed',
  { query: string; error: string }
>('memory_query_failed') {}
export class MemoryRetrievalStartedEvent extends defineEvent<'memory_retrieval_started', { query: string }>(
  'memory_retrieval_started',
) {}
export class MemoryRetrievalCompletedEvent extends defineEvent<
  'memory_retrieval_completed',
  { query: string; results: string[] }
>('memory_retrieval_completed') {}
export class MemoryRetrievalFailedEvent extends defineEvent<
  'memory_retrieval_failed',
  { query: string; error: string }
>('memory_retrieval_failed') {}
export class KnowledgeSearchQueryStartedEvent extends defineEvent<
  'knowledge_search_query_started',
  { query: string }
>('knowledge_search_query_started') {}
export class KnowledgeSearchQueryCompletedEvent extends defineEvent<
  'knowledge_search_query_completed',
  { query: string; results: string[] }
>('knowledge_search_query_completed') {}
export class KnowledgeQueryStartedEvent extends defineEvent<'knowledge_query_started', { query: string }>(
  'knowledge_query_started',
) {}
export class KnowledgeQueryCompletedEvent extends defineEvent<
  'knowledge_query_completed',
  { query: string; results: string[] }
>('knowledge_query_completed') {}
export class KnowledgeQueryFailedEvent extends defineEvent<
  'knowledge_query_failed',
  { query: string; error: string }
>('knowledge_query_failed') {}
export class KnowledgeSearchQueryFailedEvent extends defineEvent<
  'knowledge_search_query_failed',
  { query: string; error: string }
>('knowledge_search_query_failed') {}
export class AgentReasoningStartedEvent extends defineEvent('agent_reasoning_started') {}
export class AgentReasoningCompletedEvent extends defineEvent('agent_reasoning_completed') {}
export class AgentReasoningFailedEvent extends defineEvent('agent_reasoning_failed') {}
export class MCPConnectionStartedEvent extends defineEvent('mcp_connection_started') {}
export class MCPConnectionCompletedEvent extends defineEvent('mcp_connection_completed') {}
export class MCPConnectionFailedEvent extends defineEvent('mcp_connection_failed') {}
export class MCPToolExecutionStartedEvent extends defineEvent('mcp_tool_execution_started') {}
export class MCPToolExecutionCompletedEvent extends defineEvent('mcp_tool_execution_completed') {}
export class MCPToolExecutionFailedEvent extends defineEvent('mcp_tool_execution_failed') {}
export class MCPConfigFetchFailedEvent extends defineEvent('mcp_config_fetch_failed') {}
export class StepObservationStartedEvent extends defineEvent('step_observation_started') {}
export class StepObservationCompletedEvent extends defineEvent('step_observation_completed') {}
export class StepObservationFailedEvent extends defineEvent('step_observation_failed') {}
export class PlanRefinementEvent extends defineEvent('plan_refinement') {}
export class PlanReplanTriggeredEvent extends defineEvent('plan_replan_triggered') {}
export class GoalAchievedEarlyEvent extends defineEvent('goal_achieved_early') {}
export class SkillDiscoveryStartedEvent extends defineEvent('skill_discovery_started') {}
export class SkillDiscoveryCompletedEvent extends defineEvent('skill_discovery_completed') {}
export class SkillLoadedEvent extends defineEvent('skill_loaded') {}
export class SkillActivatedEvent extends defineEvent('skill_activated') {}
export class SkillLoadFailedEvent extends defineEvent('skill_load_failed') {}
export class AgentLogsStartedEvent extends defineEvent('agent_logs_started') {}
export class AgentLogsExecutionEvent extends defineEvent('agent_logs_execution') {}
export class A2ADelegationStartedEvent extends defineEvent('a2a_delegation_started') {}
export class A2ADelegationCompletedEvent extends defineEvent('a2a_delegation_completed') {}
export class A2AConversationStartedEvent extends defineEvent('a2a_conversation_started') {}
export class A2AConversationCompletedEvent extends defineEvent('a2a_conversation_completed') {}
export class A2AMessageSentEvent extends defineEvent('a2a_message_sent') {}
export class A2AResponseReceivedEvent extends defineEvent('a2a_response_received') {}
export class A2APollingStartedEvent extends defineEvent('a2a_polling_started') {}
export class A2APollingStatusEvent extends defineEvent('a2a_polling_status') {}
export class A2APushNotificationRegisteredEvent extends defineEvent('a2a_push_notification_registered') {}
export class A2APushNotificationReceivedEvent extends defineEvent('a2a_push_notification_received') {}
export class A2APushNotificationSentEvent extends defineEvent('a2a_push_notification_sent') {}
export class A2APushNotificationTimeoutEvent extends defineEvent('a2a_push_notification_timeout') {}
export class A2AStreamingStartedEvent extends defineEvent('a2a_streaming_started') {}
export class A2AStreamingChunkEvent extends defineEvent('a2a_streaming_chunk') {}
export class A2AAgentCardFetchedEvent extends defineEvent('a2a_agent_card_fetched') {}
export class A2AAuthenticationFailedEvent extends defineEvent('a2a_authentication_failed') {}
export class A2AArtifactReceivedEvent extends defineEvent('a2a_artifact_received') {}
export class A2AConnectionErrorEvent extends defineEvent('a2a_connection_error') {}
export class A2AServerTaskStartedEvent extends defineEvent('a2a_server_task_started') {}
export class A2AServerTaskCompletedEvent extends defineEvent('a2a_server_task_completed') {}
export class A2AServerTaskCanceledEvent extends defineEvent('a2a_server_task_canceled') {}
export class A2AServerTaskFailedEvent extends defineEvent('a2a_server_task_failed') {}
export class A2AParallelDelegationStartedEvent extends defineEvent('a2a_parallel_delegation_started') {}
export class A2AParallelDelegationCompletedEvent extends defineEvent('a2a_parallel_delegation_completed') {}
export class A2ATransportNegotiatedEvent extends defineEvent('a2a_transport_negotiated') {}
export class A2AContentTypeNegotiatedEvent extends defineEvent('a2a_content_type_negotiated') {}
export class A2AContextCreatedEvent extends defineEvent('a2a_context_created') {}
export class A2AContextExpiredEvent extends defineEvent('a2a_context_expired') {}
export class A2AContextIdleEvent extends defineEvent('a2a_context_idle') {}
export class A2AContextCompletedEvent extends defineEvent('a2a_context_completed') {}
export class A2AContextPrunedEvent extends defineEvent('a2a_context_pruned') {}
export class SigTermEvent extends defineEvent<'SIGTERM', SignalPayload>('SIGTERM') {}
export class SigIntEvent extends defineEvent<'SIGINT', SignalPayload>('SIGINT') {}
export class SigHupEvent extends defineEvent<'SIGHUP', SignalPayload>('SIGHUP') {}
export class SigTstpEvent extends defineEvent<'SIGTSTP', SignalPayload>('SIGTSTP') {}
export class SigContEvent extends defineEvent<'SIGCONT', SignalPayload>('SIGCONT') {}
export class CheckpointStartedEvent extends defineEvent<
  'checkpoint_started',
  { location: string; provider: string; trigger: string; branch: string; parentId: string | null }
>('checkpoint_started') {}
export class CheckpointCompletedEvent extends defineEvent<
  'checkpoint_completed',
  {
    location: string;
    provider: string;
    trigger: string;
    branch: string;
    parentId: string | null;
    checkpointId: string;
    reference: string;
    durationMs: number;
  }
>('checkpoint_completed') {}
export class CheckpointFailedEvent extends defineEvent<
  'checkpoint_failed',
  {
    location: string;
    provider: string;
    trigger: string;
    branch: string;
    parentId: string | null;
    error: string;
  }
>('checkpoint_failed') {}
export class CheckpointPrunedEvent extends defineEvent<
  'checkpoint_pruned',
  { location: string; provider: string; branch: string; removedCount: number; maxCheckpoints: number }
>('checkpoint_pruned') {}
export class CheckpointForkStartedEvent extends defineEvent<
  'checkpoint_fork_started',
  { branch: string; parentBranch: string; parentCheckpointId: string | null }
>('checkpoint_fork_started') {}
export class CheckpointForkCompletedEvent extends defineEvent<
  'checkpoint_fork_completed',
  { branch: string; parentBranch: string; parentCheckpointId: string | null }
>('checkpoint_fork_completed') {}
export class CheckpointRestoreStartedEvent extends defineEvent<
  'checkpoint_restore_started',
  { reference: string }
>('checkpoint_restore_started') {}
export class CheckpointRestoreCompletedEvent extends defineEvent<
  'checkpoint_restore_completed',
  { reference: string; checkpointId: string; branch: string; parentId: string | null; durationMs: number }
>('checkpoint_restore_completed') {}
export class CheckpointRestoreFailedEvent extends defineEvent<
  'checkpoint_restore_failed',
  { reference: string; error: string }
>('checkpoint_restore_failed') {}

/** Every event class of the catalog, by type. */
export const eventClassesByType = {
  task_started: TaskStartedEvent,
  task_completed: TaskCompletedEvent,
  task_failed: TaskFailedEvent,
  task_evaluation: TaskEvaluationEvent,
  crew_kickoff_started: CrewKickoffStartedEvent,
  crew_kickoff_completed: CrewKickoffCompletedEvent,
  crew_kickoff_failed: CrewKickoffFailedEvent,
  crew_train_started: CrewTrainStartedEvent,
  crew_train_completed: CrewTrainCompletedEvent,
  crew_train_failed: CrewTrainFailedEvent,
  crew_test_started: CrewTestStartedEvent,
  crew_test_completed: CrewTestCompletedEvent,
  crew_test_failed: CrewTestFailedEvent,
  crew_test_result: CrewTestResultEvent,
  agent_execution_started: AgentExecutionStartedEvent,
  agent_execution_completed: AgentExecutionCompletedEvent,
  agent_execution_error: AgentExecutionErrorEvent,
  lite_agent_execution_started: LiteAgentExecutionStartedEvent,
  lite_agent_execution_completed: LiteAgentExecutionCompletedEvent,
  lite_agent_execution_error: LiteAgentExecutionErrorEvent,
  agent_evaluation_started: AgentEvaluationStartedEvent,
  agent_evaluation_completed: AgentEvaluationCompletedEvent,
  agent_evaluation_failed: AgentEvaluationFailedEvent,
  flow_created: FlowCreatedEvent,
  flow_started: FlowStartedEvent,
  flow_finished: FlowFinishedEvent,
  flow_paused: FlowPausedEvent,
  method_execution_started: MethodExecutionStartedEvent,
  method_execution_finished: MethodExecutionFinishedEvent,
  method_execution_failed: MethodExecutionFailedEvent,
  method_execution_paused: MethodExecutionPausedEvent,
  human_feedback_requested: HumanFeedbackRequestedEvent,
  human_feedback_received: HumanFeedbackReceivedEvent,
  flow_input_requested: FlowInputRequestedEvent,
  flow_input_received: FlowInputReceivedEvent,
  llm_call_started: LLMCallStartedEvent,
  llm_call_completed: LLMCallCompletedEvent,
  llm_call_failed: LLMCallFailedEvent,
  llm_stream_chunk: LLMStreamChunkEvent,
  llm_thinking_chunk: LLMThinkingChunkEvent,
  llm_guardrail_started: LLMGuardrailStartedEvent,
  llm_guardrail_completed: LLMGuardrailCompletedEvent,
  llm_guardrail_failed: LLMGuardrailFailedEvent,
  tool_usage_started: ToolUsageStartedEvent,
  tool_usage_finished: ToolUsageFinishedEvent,
  tool_usage_error: ToolUsageErrorEvent,
  tool_validate_input_error: ToolValidateInputErrorEvent,
  tool_selection_error: ToolSelectionErrorEvent,
  tool_execution_error: ToolExecutionErrorEvent,
  memory_save_started: MemorySaveStartedEvent,
  memory_save_completed: MemorySaveCompletedEvent,
  memory_save_failed: MemorySaveFailedEvent,
  memory_query_started: MemoryQueryStartedEvent,
  memory_query_completed: MemoryQueryCompletedEvent,
  memory_query_failed: MemoryQueryFailedEvent,
  memory_retrieval_started: MemoryRetrievalStartedEvent,
  memory_retrieval_completed: MemoryRetrievalCompletedEvent,
  memory_retrieval_failed: MemoryRetrievalFailedEvent,
  knowledge_search_query_started: KnowledgeSearchQueryStartedEvent,
  knowledge_search_query_completed: KnowledgeSearchQueryCompletedEvent,
  knowledge_query_started: KnowledgeQueryStartedEvent,
  knowledge_query_completed: KnowledgeQueryCompletedEvent,
  knowledge_query_failed: KnowledgeQueryFailedEvent,
  knowledge_search_query_failed: KnowledgeSearchQueryFailedEvent,
  agent_reasoning_started: AgentReasoningStartedEvent,
  agent_reasoning_completed: AgentReasoningCompletedEvent,
  agent_reasoning_failed: AgentReasoningFailedEvent,
  mcp_connection_started: MCPConnectionStartedEvent,
  mcp_connection_completed: MCPConnectionCompletedEvent,
  mcp_connection_failed: MCPConnectionFailedEvent,
  mcp_tool_execution_started: MCPToolExecutionStartedEvent,
  mcp_tool_execution_completed: MCPToolExecutionCompletedEvent,
  mcp_tool_execution_failed: MCPToolExecutionFailedEvent,
  mcp_config_fetch_failed: MCPConfigFetchFailedEvent,
  step_observation_started: StepObservationStartedEvent,
  step_observation_completed: StepObservationCompletedEvent,
  step_observation_failed: StepObservationFailedEvent,
  plan_refinement: PlanRefinementEvent,
  plan_replan_triggered: PlanReplanTriggeredEvent,
  goal_achieved_early: GoalAchievedEarlyEvent,
  skill_discovery_started: SkillDiscoveryStartedEvent,
  skill_discovery_completed: SkillDiscoveryCompletedEvent,
  skill_loaded: SkillLoadedEvent,
  skill_activated: SkillActivatedEvent,
  skill_load_failed: SkillLoadFailedEvent,
  agent_logs_started: AgentLogsStartedEvent,
  agent_logs_execution: AgentLogsExecutionEvent,
  a2a_delegation_started: A2ADelegationStartedEvent,
  a2a_delegation_completed: A2ADelegationCompletedEvent,
  a2a_conversation_started: A2AConversationStartedEvent,
  a2a_conversation_completed: A2AConversationCompletedEvent,
  a2a_message_sent: A2AMessageSentEvent,
  a2a_response_received: A2AResponseReceivedEvent,
  a2a_polling_started: A2APollingStartedEvent,
  a2a_polling_status: A2APollingStatusEvent,
  a2a_push_notification_registered: A2APushNotificationRegisteredEvent,
  a2a_push_notification_received: A2APushNotificationReceivedEvent,
  a2a_push_notification_sent: A2APushNotificationSentEvent,
  a2a_push_notification_timeout: A2APushNotificationTimeoutEvent,
  a2a_streaming_started: A2AStreamingStartedEvent,
  a2a_streaming_chunk: A2AStreamingChunkEvent,
  a2a_agent_card_fetched: A2AAgentCardFetchedEvent,
  a2a_authentication_failed: A2AAuthenticationFailedEvent,
  a2a_artifact_received: A2AArtifactReceivedEvent,
  a2a_connection_error: A2AConnectionErrorEvent,
  a2a_server_task_started: A2AServerTaskStartedEvent,
  a2a_server_task_completed: A2AServerTaskCompletedEvent,
  a2a_server_task_canceled: A2AServerTaskCanceledEvent,
  a2a_server_task_failed: A2AServerTaskFailedEvent,
  a2a_parallel_delegation_started: A2AParallelDelegationStartedEvent,
  a2a_parallel_delegation_completed: A2AParallelDelegationCompletedEvent,
  a2a_transport_negotiated: A2ATransportNegotiatedEvent,
  a2a_content_type_negotiated: A2AContentTypeNegotiatedEvent,
  a2a_context_created: A2AContextCreatedEvent,
  a2a_context_expired: A2AContextExpiredEvent,
  a2a_context_idle: A2AContextIdleEvent,
  a2a_context_completed: A2AContextCompletedEvent,
  a2a_context_pruned: A2AContextPrunedEvent,
  SIGTERM: SigTermEvent,
  SIGINT: SigIntEvent,
  SIGHUP: SigHupEvent,
  SIGTSTP: SigTstpEvent,
  SIGCONT: SigContEvent,
  checkpoint_started: CheckpointStartedEvent,
  checkpoint_completed: CheckpointCompletedEvent,
  checkpoint_failed: CheckpointFailedEvent,
  checkpoint_pruned: CheckpointPrunedEvent,
  checkpoint_fork_started: CheckpointForkStartedEvent,
  checkpoint_fork_completed: CheckpointForkCompletedEvent,
  checkpoint_restore_started: CheckpointRestoreStartedEvent,
  checkpoint_restore_completed: CheckpointRestoreCompletedEvent,
  checkpoint_restore_failed: CheckpointRestoreFailedEvent,
} as const;
