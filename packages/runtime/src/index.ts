// The public surface of @crewline/runtime. Other parts of the package append their exports here.
export {
  type AgentLoopOptions,
  type AgentLoopResult,
  DEFAULT_MAX_ITERATIONS,
  runAgentLoop,
} from './agent-loop/agent-loop.js';
export { FINAL_ANSWER_REQUEST } from './agent-loop/control-messages.js';
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
export { Run, type RunOptions } from './checkpointing/run.js';
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
export { modelIdOf, type ParsedModelId, parseModelId } from './models/model-id.js';
export {
  builtInModelProviders,
  MissingApiKeyError,
  type ModelRegistry,
  type RegisteredModel,
  type ResolveModelOptions,
  resolveModel,
} from './models/resolve-model.js';
export {
  type CrewlineTool,
  defineTool,
  isCrewlineTool,
  type ToolDefinition,
  type ToolExecutionContext,
  toolsByName,
} from './tools/define-tool.js';
