// The public surface of @crewline/runtime, one name at a time: what SPEC §2 names, the options and
// results of those, the errors users catch, and what a project builds with (tools, models, memory,
// knowledge, crewline.config.ts, continuing a checkpoint). Everything else is internal to the package;
// what crewline's own packages need besides lives in ./internal (src/internal/index.ts). Sorted by
// module path, as biome keeps it.

export { Agent } from './agent/agent.js';
export type { AgentKickoffOptions, AgentOptions, AgentRestoreOptions } from './agent/agent-options.js';
export type { AgentOutput } from './agent/agent-output.js';
export type { Conversation, TokenUsage } from './agent-loop/conversation.js';
export type { ModelCallSettings } from './agent-loop/model-step.js';
export type { CachePreloadStrategy } from './cache-preload/preload-caches.js';
export { providerRegistry } from './checkpointing/provider-registry.js';
export { Crew, type CrewStatus } from './crew/crew.js';
export type {
  CrewKickoffOptions,
  CrewOptions,
  CrewProcess,
  CrewRestoreOptions,
} from './crew/crew-options.js';
export { CrewOutput } from './crew/crew-output.js';
export {
  and,
  type ConditionInput,
  Flow,
  type FlowClassOrMethodDecorator,
  type FlowCondition,
  type FlowConstructor,
  FlowMethodCallLimitError,
  type FlowMethodDecorator,
  type FlowOptions,
  type FlowPauseInfo,
  type FlowResult,
  type FlowState,
  type FlowStateCheckpoint,
  type FlowStateInfo,
  type FlowStatus,
  findRerunPoint,
  type KickoffOptions,
  type ListFlowStatesOptions,
  listen,
  listFlowStateHistory,
  listFlowStates,
  type MethodReference,
  or,
  type PersistOptions,
  persist,
  type ResumeOptions,
  type ResumeTarget,
  router,
  type StateInit,
  type StateSchema,
  start,
} from './flow/index.js';
export {
  KnowledgeBase,
  type KnowledgeBaseOptions,
  type KnowledgeBaseSnapshot,
  type KnowledgeResult,
} from './knowledge/knowledge-base.js';
export {
  type KnowledgeDocument,
  type KnowledgeSource,
  type KnowledgeSourceSnapshot,
  StringKnowledgeSource,
  type StringKnowledgeSourceOptions,
  TextFileKnowledgeSource,
  type TextFileKnowledgeSourceOptions,
} from './knowledge/knowledge-source.js';
export {
  type MemoryEventOptions,
  type MemoryItem,
  type MemorySearchResult,
  ShortTermMemory,
  type ShortTermMemorySnapshot,
} from './memory/short-term-memory.js';
export type { PackageLoader } from './models/built-in-providers.js';
export { type LanguageModelObject, type ModelInput, modelIdOf } from './models/model-id.js';
export type { ModelProviderMap, ModelProviderRegistry, ModelProviders } from './models/model-providers.js';
export {
  MissingApiKeyError,
  type ModelRegistry,
  type RegisteredModel,
  type ResolveModelOptions,
  resolveModel,
} from './models/resolve-model.js';
export type { StoredModelSettings } from './models/stored-model.js';
export { type LoadProjectConfigOptions, loadProjectConfig } from './project-config/load-project-config.js';
export {
  defineConfig,
  type FlowClass,
  type ProjectConfig,
  ProjectRegistry,
  registerProject,
} from './project-config/project-config.js';
export {
  type ContinueOptions,
  type ContinueResult,
  continueFromCheckpoint,
  type RunPause,
} from './restore/continue-from-checkpoint.js';
export { Task, type TaskOptions, type TaskStatus } from './task/task.js';
export { TaskOutput } from './task/task-output.js';
export {
  type CrewlineTool,
  defineTool,
  type ToolDefinition,
  type ToolExecutionContext,
} from './tools/define-tool.js';
