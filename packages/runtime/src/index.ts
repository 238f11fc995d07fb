// The public surface of @crewline/runtime. Other parts of the package append their exports here.
export { Agent } from './agent/agent.js';
export {
  type AgentKickoffOptions,
  type AgentOptions,
  type AgentRestoreOptions,
  defaultModelId,
} from './agent/agent-options.js';
export type { AgentOutput } from './agent/agent-output.js';
export {
  type AgentLoopOptions,
  type AgentLoopResult,
  DEFAULT_MAX_ITERATIONS,
  runAgentLoop,
} from './agent-loop/agent-loop.js';
export {
  addUsage,
  type Conversation,
  emptyUsage,
  newConversation,
  pendingToolCalls,
  sumUsage,
  type TokenUsage,
} from './agent-loop/conversation.js';
export type { ModelCallSettings } from './agent-loop/model-step.js';
export { commonPrefix, MINIMUM_SHARED_PREFIX, sharedPrefixLength } from './cache-preload/common-prefix.js';
export {
  type CachePreloadAgent,
  type CachePreloadProbe,
  type CachePreloadResult,
  type CachePreloadStrategy,
  type PreloadCachesOptions,
  preloadCaches,
} from './cache-preload/preload-caches.js';
export {
  isAnthropicModel,
  type SystemPrompt,
  type SystemPromptOptions,
  systemPromptFor,
  systemPromptText,
} from './cache-preload/system-prompt.js';
export { providerRegistry } from './checkpointing/provider-registry.js';
export { Run, type RunOptions } from './checkpointing/run.js';
export { Crew, type CrewStatus } from './crew/crew.js';
export type {
  CrewKickoffOptions,
  CrewOptions,
  CrewProcess,
  CrewRestoreOptions,
} from './crew/crew-options.js';
export { CrewOutput } from './crew/crew-output.js';
export { DELEGATION_TOOL_NAME } from './crew/delegation.js';
// Flow, start, listen, router, and, or, persist (and the flow restorer for continueFromCheckpoint).
export * from './flow/index.js';
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
  knowledgeSourceFromJSON,
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
export {
  type LanguageModelObject,
  type ModelInput,
  modelIdOf,
  type ParsedModelId,
  parseModelId,
} from './models/model-id.js';
export type { ModelProviderMap, ModelProviderRegistry, ModelProviders } from './models/model-providers.js';
export {
  builtInModelProviders,
  MissingApiKeyError,
  type ModelRegistry,
  type RegisteredModel,
  type ResolveModelOptions,
  resolveModel,
} from './models/resolve-model.js';
export type { StoredModelSettings } from './models/stored-model.js';
export {
  type LoadProjectConfigOptions,
  loadProjectConfig,
  PROJECT_CONFIG_FILES,
} from './project-config/load-project-config.js';
export {
  defineConfig,
  type FlowClass,
  type ProjectConfig,
  ProjectRegistry,
  projectRegistry,
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
export { findPlaceholders } from './templating/interpolate.js';
export {
  type CrewlineTool,
  defineTool,
  isCrewlineTool,
  type ToolDefinition,
  type ToolExecutionContext,
  toolsByName,
} from './tools/define-tool.js';
