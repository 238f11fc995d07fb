import type { CheckpointSetting } from '@crewline/runtime-state';
import type { TelemetrySettings } from 'ai';
import type { Agent } from '../agent/agent.js';
import type { TokenUsage } from '../agent-loop/conversation.js';
import type { CachePreloadStrategy } from '../cache-preload/preload-caches.js';
import type { KnowledgeBase } from '../knowledge/knowledge-base.js';
import type { ShortTermMemory } from '../memory/short-term-memory.js';
import type { ProjectRegistry } from '../project-config/project-config.js';
import type { Task } from '../task/task.js';
import type { CrewProcess } from './crew-options.js';

export type CrewStatus = 'pending' | 'running' | 'completed' | 'failed';

/**
 * A crew as the modules that run, snapshot, restore and edit it read and change it. `Crew`
 * implements it; those modules take it instead of the class, so crew.ts, which imports them, is not
 * imported back (no import cycle, type-only ones included).
 */
export interface CrewParts {
  id: string;
  readonly name: string;
  readonly agents: Agent[];
  readonly tasks: Task[];
  readonly process: CrewProcess;
  readonly manager: Agent | undefined;
  /** Whether the manager was made from `managerLlm` (rather than given). */
  readonly managerGenerated: boolean;
  readonly memoryEnabled: boolean;
  memory: ShortTermMemory | undefined;
  knowledge: KnowledgeBase | undefined;
  checkpoint: CheckpointSetting;
  readonly cachePreload: boolean;
  readonly cachePreloadStrategy: CachePreloadStrategy;
  readonly restoreKey: string | undefined;
  telemetry: TelemetrySettings | undefined;
  status: CrewStatus;
  kickoffStarted: boolean;
  inputs: Record<string, unknown>;
  /** Tokens spent on cache preload probes. */
  probeUsage: TokenUsage;
  /**
   * Where the classes of its values (kickoff inputs, structured task outputs) are found: the registry
   * a restore was given (`continueFromCheckpoint({ registry })`), else the process's.
   */
  valueRegistry: ProjectRegistry | undefined;
}
