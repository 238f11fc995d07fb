// For crewline's own packages (the CLI, the worker, bench, the apps) and nothing else. Not part of the
// public API: any name here may change or go in any release, minor and patch included. Build on `.`
// instead. Keep what this file reaches light: the CLI imports it before it loads the runtime.

export {
  type ContinuedSinceReadAdvice,
  continuedSinceReadMessage,
} from '../checkpointing/head-when-read.js';
export {
  callsMadeAgain,
  changesInputs,
  givesRedactedAgain,
  type RestartCause,
} from '../crew/interrupted-tasks.js';
export { findRerunCheckpoint } from '../flow/rerun-point.js';
export { findProjectConfigFile } from '../project-config/config-file.js';
export { asksForLatest } from '../restore/asks-for-latest.js';
export {
  type ContinuationRequest,
  checkContinuation,
  type NothingToRun,
  nothingToRunMessage,
} from '../restore/check-continuation.js';
export { type ContinuedFlowMethods, continuedFlowMethods } from '../restore/continued-flow-methods.js';
export { savedInputs } from '../restore/saved-inputs.js';
export {
  carriedTaskNumbers,
  type InterruptedTask,
  type InterruptedTasksOutcome,
  interruptedTasks,
  interruptedTasksOutcome,
} from '../restore/saved-interrupted-tasks.js';
