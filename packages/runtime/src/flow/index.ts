export { and, type ConditionInput, type FlowCondition, type MethodReference, or } from './conditions.js';
export {
  type FlowClassOrMethodDecorator,
  type FlowMethodDecorator,
  listen,
  persist,
  router,
  start,
} from './decorators.js';
export { FlowMethodCallLimitError } from './errors.js';
export { Flow, type FlowConstructor } from './flow.js';
export type { PersistOptions } from './flow-metadata.js';
export type { FlowState, StateInit, StateSchema } from './flow-state.js';
export type {
  FlowOptions,
  FlowPauseInfo,
  FlowResult,
  KickoffOptions,
  ResumeOptions,
  ResumeTarget,
} from './flow-types.js';
export {
  type FlowStateCheckpoint,
  type FlowStateInfo,
  findRerunPoint,
  type ListFlowStatesOptions,
  listFlowStateHistory,
  listFlowStates,
} from './list-flow-states.js';
export type { FlowStatus } from './run-progress.js';
