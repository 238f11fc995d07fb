// The data a checkpoint holds for each kind of entity — one owner per shape: its versioned schema,
// its writer (`to…Data`), its parser (`parse…Data`, a damaged field is a `corrupt_checkpoint` error
// naming it) and the edits made to it. The runtime writes and restores through these, the CLI and
// TUI read and edit through them.
export {
  AGENT_DATA_VERSION,
  type AgentData,
  type AgentDefinitionData,
  type AgentStatus,
  agentDataSchema,
  agentDefinitionDataSchema,
  agentStatuses,
  parseAgentData,
  toAgentData,
} from './agent-data.js';
export {
  type ConversationData,
  conversationDataSchema,
  type UsageData,
  usageDataSchema,
} from './common.js';
export { findUnknownInput, knownInputNames, nothingLeftToRun } from './continuation-checks.js';
export {
  CREW_DATA_VERSION,
  type CrewData,
  type CrewStatus,
  crewDataSchema,
  crewStatuses,
  parseCrewData,
  shownCrewStatus,
  type TaskData,
  type TaskOutputData,
  type TaskStatus,
  taskLabel,
  taskStatuses,
  toCrewData,
} from './crew-data.js';
export {
  type CrewEntry,
  editTaskOutputs,
  editTaskOutputsInDocument,
  invalidatedTask,
  type TaskOutputEditOptions,
} from './crew-edit.js';
export {
  FLOW_DATA_VERSION,
  type FlowData,
  type FlowExecutionData,
  type FlowStatus,
  flowDataSchema,
  flowExecutionDataSchema,
  flowStatuses,
  parseFlowData,
  toFlowData,
} from './flow-data.js';
export {
  forgetTaskItems,
  isTaskItemFrom,
  type MemoryItem,
  memoryDataSchema,
  memoryItemId,
  parseMemoryData,
  rememberText,
  type ShortTermMemoryData,
  type TaskMemoryMetadata,
} from './memory-data.js';
export { findPlaceholders, placeholderPattern, placeholderText } from './placeholders.js';
