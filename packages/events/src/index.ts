export { addRedaction, type RedactionOptions } from './add-redaction.js';
export type { EventClass, EventContext, EventInit, EventRecord, EventSource } from './base-event.js';
export { BaseEvent, defineEvent } from './base-event.js';
export * from './catalog.js';
export type { CrewlineErrorCode, CrewlineErrorOptions } from './errors.js';
export { CrewlineError } from './errors.js';
export type { EmitResult, EventHandler, HandlerState, RunState, RunStateTypes } from './event-bus.js';
export { EventBus, eventBus } from './event-bus.js';
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
export type { LogLevel, LogRecord, LogSink } from './logger.js';
export { logger, setLogLevel, setLogSink } from './logger.js';
export { redactionGeneration } from './redaction-registry.js';
export { isSecretKey } from './secret-names.js';
export { REDACTED, redactSecretsInText } from './secret-patterns.js';
export {
  MINIMUM_SECRET_LENGTH,
  registerEnvironmentSecrets,
  registerSecretValue,
  registerSecretValues,
} from './secret-values.js';
