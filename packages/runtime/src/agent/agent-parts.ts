import type { CheckpointSetting } from '@crewline/runtime-state';
import type { LanguageModel, ModelMessage, TelemetrySettings } from 'ai';
import type { Conversation } from '../agent-loop/conversation.js';
import type { ModelCallSettings } from '../agent-loop/model-step.js';
import type { KnowledgeBase } from '../knowledge/knowledge-base.js';
import type { ShortTermMemory } from '../memory/short-term-memory.js';
import type { StoredModelSettings } from '../models/stored-model.js';
import type { CrewlineTool } from '../tools/define-tool.js';

/**
 * An agent as the module that snapshots and rebuilds it (agent-snapshot.ts) reads and changes it.
 * `Agent` implements it; that module takes it instead of the class, so agent.ts, which imports it,
 * is not imported back (no import cycle, type-only ones included).
 */
export interface AgentParts {
  id: string;
  readonly role: string;
  readonly goal: string;
  readonly backstory: string;
  llm: LanguageModel | string;
  readonly tools: readonly CrewlineTool[];
  readonly maxIterations: number;
  readonly settings: ModelCallSettings | undefined;
  telemetry: TelemetrySettings | undefined;
  checkpoint: CheckpointSetting;
  memory: ShortTermMemory | undefined;
  knowledge: KnowledgeBase | undefined;
  /** The registered name of `llm` when it was rebuilt from a registry. */
  modelName: string | undefined;
  /** The model settings a checkpoint stored for `llm` when it is an id. */
  modelSettings: StoredModelSettings | undefined;
  /** The model id checkpoints store for `llm`. */
  readonly modelId: string;
  // Progress of a standalone kickoff.
  conversation: Conversation | undefined;
  kickoffStarted: boolean;
  status: 'pending' | 'running' | 'completed' | 'failed';
  inputs: Record<string, unknown>;
  kickoffMessages: ModelMessage[] | undefined;
  recallAdded: boolean;
}
