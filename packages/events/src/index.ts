// The public surface of @crewline/events, one name at a time (no export *).
export { addRedaction, type RedactionOptions } from './add-redaction.js';
export type { EventClass, EventContext, EventInit, EventRecord, EventSource } from './base-event.js';
export { BaseEvent, defineEvent } from './base-event.js';
// The event catalog: every class by type here, and by name from the ./event-classes files below (one
// per category), listed so the public surface is one list.
export { eventClassesByType } from './catalog.js';
export { registerAddressPasswords, registerEnvironmentSecrets } from './environment-credentials.js';
export type { CrewlineErrorCode, CrewlineErrorOptions } from './errors.js';
export { CrewlineError } from './errors.js';
export type {
  AnyHandlerOptions,
  EmitResult,
  EventHandler,
  HandlerState,
  RunState,
  RunStateTypes,
} from './event-bus.js';
export { EventBus, eventBus } from './event-bus.js';
export {
  A2AAgentCardFetchedEvent,
  A2AArtifactReceivedEvent,
  A2AAuthenticationFailedEvent,
  A2AConnectionErrorEvent,
  A2AContentTypeNegotiatedEvent,
  A2AContextCompletedEvent,
  A2AContextCreatedEvent,
  A2AContextExpiredEvent,
  A2AContextIdleEvent,
  A2AContextPrunedEvent,
  A2AConversationCompletedEvent,
  A2AConversationStartedEvent,
  A2ADelegationCompletedEvent,
  A2ADelegationStartedEvent,
  A2AMessageSentEvent,
  A2AParallelDelegationCompletedEvent,
  A2AParallelDelegationStartedEvent,
  A2APollingStartedEvent,
  A2APollingStatusEvent,
  A2APushNotificationReceivedEvent,
  A2APushNotificationRegisteredEvent,
  A2APushNotificationSentEvent,
  A2APushNotificationTimeoutEvent,
  A2AResponseReceivedEvent,
  A2AServerTaskCanceledEvent,
  A2AServerTaskCompletedEvent,
  A2AServerTaskFailedEvent,
  A2AServerTaskStartedEvent,
  A2AStreamingChunkEvent,
  A2AStreamingStartedEvent,
  A2ATransportNegotiatedEvent,
} from './event-classes/a2a-events.js';
export {
  AgentLogsExecutionEvent,
  AgentLogsStartedEvent,
  AgentReasoningCompletedEvent,
  AgentReasoningFailedEvent,
  AgentReasoningStartedEvent,
  GoalAchievedEarlyEvent,
  MCPConfigFetchFailedEvent,
  MCPConnectionCompletedEvent,
  MCPConnectionFailedEvent,
  MCPConnectionStartedEvent,
  MCPToolExecutionCompletedEvent,
  MCPToolExecutionFailedEvent,
  MCPToolExecutionStartedEvent,
  PlanRefinementEvent,
  PlanReplanTriggeredEvent,
  SkillActivatedEvent,
  SkillDiscoveryCompletedEvent,
  SkillDiscoveryStartedEvent,
  SkillLoadedEvent,
  SkillLoadFailedEvent,
  StepObservationCompletedEvent,
  StepObservationFailedEvent,
  StepObservationStartedEvent,
} from './event-classes/agent-capability-events.js';
export {
  CheckpointCompletedEvent,
  CheckpointFailedEvent,
  CheckpointForkCompletedEvent,
  CheckpointForkStartedEvent,
  CheckpointPrunedEvent,
  CheckpointRestoreCompletedEvent,
  CheckpointRestoreFailedEvent,
  CheckpointRestoreStartedEvent,
  CheckpointStartedEvent,
} from './event-classes/checkpoint-events.js';
export {
  AgentEvaluationCompletedEvent,
  AgentEvaluationFailedEvent,
  AgentEvaluationStartedEvent,
  AgentExecutionCompletedEvent,
  AgentExecutionErrorEvent,
  AgentExecutionStartedEvent,
  CrewKickoffCompletedEvent,
  CrewKickoffFailedEvent,
  CrewKickoffStartedEvent,
  CrewTestCompletedEvent,
  CrewTestFailedEvent,
  CrewTestResultEvent,
  CrewTestStartedEvent,
  CrewTrainCompletedEvent,
  CrewTrainFailedEvent,
  CrewTrainStartedEvent,
  LiteAgentExecutionCompletedEvent,
  LiteAgentExecutionErrorEvent,
  LiteAgentExecutionStartedEvent,
  TaskCompletedEvent,
  TaskEvaluationEvent,
  TaskFailedEvent,
  TaskStartedEvent,
} from './event-classes/crew-events.js';
export {
  FlowCreatedEvent,
  FlowFinishedEvent,
  FlowInputReceivedEvent,
  FlowInputRequestedEvent,
  FlowPausedEvent,
  FlowStartedEvent,
  HumanFeedbackReceivedEvent,
  HumanFeedbackRequestedEvent,
  MethodExecutionFailedEvent,
  MethodExecutionFinishedEvent,
  MethodExecutionPausedEvent,
  MethodExecutionStartedEvent,
} from './event-classes/flow-events.js';
export {
  LLMCallCompletedEvent,
  LLMCallFailedEvent,
  LLMCallStartedEvent,
  LLMGuardrailCompletedEvent,
  LLMGuardrailFailedEvent,
  LLMGuardrailStartedEvent,
  LLMStreamChunkEvent,
  LLMThinkingChunkEvent,
  type TokenUsageRecord,
} from './event-classes/llm-events.js';
export {
  KnowledgeQueryCompletedEvent,
  KnowledgeQueryFailedEvent,
  KnowledgeQueryStartedEvent,
  KnowledgeSearchQueryCompletedEvent,
  KnowledgeSearchQueryFailedEvent,
  KnowledgeSearchQueryStartedEvent,
  MemoryQueryCompletedEvent,
  MemoryQueryFailedEvent,
  MemoryQueryStartedEvent,
  MemoryRetrievalCompletedEvent,
  MemoryRetrievalFailedEvent,
  MemoryRetrievalStartedEvent,
  MemorySaveCompletedEvent,
  MemorySaveFailedEvent,
  MemorySaveStartedEvent,
} from './event-classes/memory-events.js';
export {
  SigContEvent,
  SigHupEvent,
  SigIntEvent,
  type SignalPayload,
  SigTermEvent,
  SigTstpEvent,
} from './event-classes/signal-events.js';
export {
  ToolExecutionErrorEvent,
  ToolSelectionErrorEvent,
  ToolUsageErrorEvent,
  ToolUsageFinishedEvent,
  ToolUsageStartedEvent,
  ToolValidateInputErrorEvent,
} from './event-classes/tool-events.js';
export type {
  CheckpointEventType,
  CheckpointLifecycleEventType,
  EventType,
  SignalEventType,
  TriggerEventType,
} from './event-types.js';
export {
  allEventTypes,
  checkpointLifecycleEventTypes,
  eventTypesByCategory,
  isTriggerEventType,
  signalEventTypes,
  triggerEventTypes,
} from './event-types.js';
export { keepNamesFromValueRedaction } from './kept-names.js';
export type { LogLevel, LogRecord, LogSink } from './logger.js';
export { logger, setLogLevel, setLogSink } from './logger.js';
export { redactionGeneration } from './redaction-registry.js';
export { isSecretKey } from './secret-names.js';
export { REDACTED, redactSecretsInText } from './secret-patterns.js';
export { registerSecretValue, registerSecretValues } from './secret-registration.js';
export { MINIMUM_SECRET_LENGTH, PLACEHOLDER_KEYS, secretShapeRefusal } from './secret-shape.js';
