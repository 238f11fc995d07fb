/**
 * The event catalog: every event type a run can emit, grouped as in the reference documentation.
 * `CheckpointEventType` is derived from these lists, so an editor autocompletes `onEvents` and the
 * compiler rejects a typo.
 */
export const eventTypesByCategory = {
  task: ['task_started', 'task_completed', 'task_failed', 'task_evaluation'],
  crew: [
    'crew_kickoff_started',
    'crew_kickoff_completed',
    'crew_kickoff_failed',
    'crew_train_started',
    'crew_train_completed',
    'crew_train_failed',
    'crew_test_started',
    'crew_test_completed',
    'crew_test_failed',
    'crew_test_result',
  ],
  agent: [
    'agent_execution_started',
    'agent_execution_completed',
    'agent_execution_error',
    'lite_agent_execution_started',
    'lite_agent_execution_completed',
    'lite_agent_execution_error',
    'agent_evaluation_started',
    'agent_evaluation_completed',
    'agent_evaluation_failed',
  ],
  flow: [
    'flow_created',
    'flow_started',
    'flow_finished',
    'flow_paused',
    'method_execution_started',
    'method_execution_finished',
    'method_execution_failed',
    'method_execution_paused',
    'human_feedback_requested',
    'human_feedback_received',
    'flow_input_requested',
    'flow_input_received',
  ],
  llm: [
    'llm_call_started',
    'llm_call_completed',
    'llm_call_failed',
    'llm_stream_chunk',
    'llm_thinking_chunk',
  ],
  llmGuardrail: ['llm_guardrail_started', 'llm_guardrail_completed', 'llm_guardrail_failed'],
  tool: [
    'tool_usage_started',
    'tool_usage_finished',
    'tool_usage_error',
    'tool_validate_input_error',
    'tool_selection_error',
    'tool_execution_error',
  ],
  memory: [
    'memory_save_started',
    'memory_save_completed',
    'memory_save_failed',
    'memory_query_started',
    'memory_query_completed',
    'memory_query_failed',
    'memory_retrieval_started',
    'memory_retrieval_completed',
    'memory_retrieval_failed',
  ],
  knowledge: [
    'knowledge_search_query_started',
    'knowledge_search_query_completed',
    'knowledge_query_started',
    'knowledge_query_completed',
    'knowledge_query_failed',
    'knowledge_search_query_failed',
  ],
  reasoning: ['agent_reasoning_started', 'agent_reasoning_completed', 'agent_reasoning_failed'],
  mcp: [
    'mcp_connection_started',
    'mcp_connection_completed',
    'mcp_connection_failed',
    'mcp_tool_execution_started',
    'mcp_tool_execution_completed',
    'mcp_tool_execution_failed',
    'mcp_config_fetch_failed',
  ],
  observation: [
    'step_observation_started',
    'step_observation_completed',
    'step_observation_failed',
    'plan_refinement',
    'plan_replan_triggered',
    'goal_achieved_early',
  ],
  skill: [
    'skill_discovery_started',
    'skill_discovery_completed',
    'skill_loaded',
    'skill_activated',
    'skill_load_failed',
  ],
  logging: ['agent_logs_started', 'agent_logs_execution'],
  a2a: [
    'a2a_delegation_started',
    'a2a_delegation_completed',
    'a2a_conversation_started',
    'a2a_conversation_completed',
    'a2a_message_sent',
    'a2a_response_received',
    'a2a_polling_started',
    'a2a_polling_status',
    'a2a_push_notification_registered',
    'a2a_push_notification_received',
    'a2a_push_notification_sent',
    'a2a_push_notification_timeout',
    'a2a_streaming_started',
    'a2a_streaming_chunk',
    'a2a_agent_card_fetched',
    'a2a_authentication_failed',
    'a2a_artifact_received',
    'a2a_connection_error',
    'a2a_server_task_started',
    'a2a_server_task_completed',
    'a2a_server_task_canceled',
    'a2a_server_task_failed',
    'a2a_parallel_delegation_started',
    'a2a_parallel_delegation_completed',
    'a2a_transport_negotiated',
    'a2a_content_type_negotiated',
    'a2a_context_created',
    'a2a_context_expired',
    'a2a_context_idle',
    'a2a_context_completed',
    'a2a_context_pruned',
  ],
  signal: ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGTSTP', 'SIGCONT'],
} as const;

/**
 * Events about checkpointing itself. They are emitted and recorded but never trigger a checkpoint
 * (that would recurse), so they are not part of {@link CheckpointEventType}.
 */
export const checkpointLifecycleEventTypes = [
  'checkpoint_started',
  'checkpoint_completed',
  'checkpoint_failed',
  'checkpoint_pruned',
  'checkpoint_fork_started',
  'checkpoint_fork_completed',
  'checkpoint_restore_started',
  'checkpoint_restore_completed',
  'checkpoint_restore_failed',
] as const;

type Categories = typeof eventTypesByCategory;

/** Every event type that can trigger a checkpoint. */
export type TriggerEventType = Categories[keyof Categories][number];
export type CheckpointLifecycleEventType = (typeof checkpointLifecycleEventTypes)[number];
/** Every event type of the catalog. */
export type EventType = TriggerEventType | CheckpointLifecycleEventType;
/** A value of `onEvents`: one event type of the catalog, or `'*'` for all of them. */
export type CheckpointEventType = TriggerEventType | '*';

export const triggerEventTypes: readonly TriggerEventType[] = Object.values(eventTypesByCategory).flat();
export const allEventTypes: readonly EventType[] = [...triggerEventTypes, ...checkpointLifecycleEventTypes];

const triggerSet: ReadonlySet<string> = new Set(triggerEventTypes);

export function isTriggerEventType(value: string): value is TriggerEventType {
  return triggerSet.has(value);
}

export const signalEventTypes = eventTypesByCategory.signal;
export type SignalEventType = (typeof signalEventTypes)[number];
