import type { EventBus } from '@crewline/events';
import type { CheckpointConfigInput, CheckpointSetting } from '@crewline/runtime-state';
import type { LanguageModel, TelemetrySettings } from 'ai';
import type { Agent } from '../agent/agent.js';
import type { CachePreloadStrategy } from '../cache-preload/preload-caches.js';
import type { KnowledgeSource } from '../knowledge/knowledge-source.js';
import type { ProjectRegistry } from '../project-config/project-config.js';
import type { Task } from '../task/task.js';

/** How a crew works through its tasks. */
export type CrewProcess = 'sequential' | 'hierarchical';

export interface CrewOptions {
  /** Shown in events, checkpoints and the CLI; also how nested crews find their saved state. Default `'crew'`. */
  name?: string;
  /** The agents. Agents that tasks name but this list omits are added. Default `[]`. */
  agents?: Agent[];
  /** The tasks, run in order. */
  tasks: Task[];
  /**
   * `'sequential'` runs each task with its own agent; `'hierarchical'` gives each task to a manager
   * that delegates to the agents through a `delegate_work_to_coworker` tool. Default `'sequential'`.
   */
  process?: CrewProcess;
  /** The manager of a hierarchical crew. Default: a built-in manager using `managerLlm`. */
  manager?: Agent;
  /** The model of the built-in manager (hierarchical crews without `manager`). Default: none. */
  managerLlm?: LanguageModel | string;
  /** Short-term memory: results of earlier tasks are searched and shown in later prompts. Default `false`. */
  memory?: boolean;
  /** Knowledge every task searches; saved (with content) in checkpoints. Default: none. */
  knowledgeSources?: KnowledgeSource[];
  /**
   * Checkpointing: `undefined` inherits (from a flow), `true` uses defaults (`./.checkpoints`, on
   * `task_completed`), `false` opts out, an object is a custom config. Default `undefined`.
   */
  checkpoint?: CheckpointSetting;
  /** Warm each agent's prompt cache with a 1-token probe at kickoff (crews with at least 2 agents). Default `false`. */
  cachePreload?: boolean;
  /** How probes are sent: `'parallel'`, `'sequential'` or `'shared_prefix'`. Default `'parallel'`. */
  cachePreloadStrategy?: CachePreloadStrategy;
  /**
   * A stable key for a crew created inside a flow method, used instead of creation order to find its
   * saved state when the flow resumes. Default: none (creation order).
   */
  restoreKey?: string;
  /**
   * AI SDK telemetry (`experimental_telemetry`, e.g. `{ isEnabled: true, tracer }`) for the model calls
   * of agents that have none of their own. Never stored in a checkpoint: pass it again to
   * `Crew.fromCheckpoint` / `Crew.fork` when you continue. Default: none.
   */
  telemetry?: TelemetrySettings;
}

/** What `Crew.fromCheckpoint` and `Crew.fork` accept besides the checkpoint config. */
export interface CrewRestoreOptions {
  /** The bus to emit on. Default: the process-wide `eventBus`. */
  bus?: EventBus;
  /**
   * Tools, models and model providers to rebuild the crew with, e.g. `new ProjectRegistry().register(
   * config)`. Default: what the process registered (`crewline.config.ts`).
   */
  registry?: ProjectRegistry;
  /** Telemetry for the continued run's model calls (never stored, so given again here). Default: none. */
  telemetry?: TelemetrySettings;
}

export interface CrewKickoffOptions {
  /** Fill `{placeholder}`s in tasks and agents. On a restored crew they re-template pending tasks only. Default `{}`. */
  inputs?: Record<string, unknown>;
  /**
   * With `restoreFrom`: continue the crew saved in that checkpoint (completed tasks skipped, the
   * interrupted task continued). Without it: turn checkpointing on for this kickoff with this config.
   */
  fromCheckpoint?: CheckpointConfigInput;
  /** Cancels the run between steps and aborts the model call in flight. */
  abortSignal?: AbortSignal;
  /**
   * The bus to emit on. Default: the bus of the run this kickoff happens in (a crew or agent kicked
   * off in a flow method joins the flow's run, whatever bus the flow was given), else the
   * process-wide `eventBus`.
   */
  bus?: EventBus;
}
