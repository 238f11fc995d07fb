import type { EventBus } from '@crewline/events';
import type { CheckpointConfigInput, CheckpointSetting } from '@crewline/runtime-state';
import type { LanguageModel, TelemetrySettings } from 'ai';
import type { z } from 'zod';
import type { ModelCallSettings } from '../agent-loop/model-step.js';
import type { KnowledgeSource } from '../knowledge/knowledge-source.js';
import type { ProjectRegistry } from '../project-config/project-config.js';
import type { CrewlineTool } from '../tools/define-tool.js';

/** Default model when an agent names none: `CREWLINE_MODEL`, else `openai:gpt-4o-mini` (needs OPENAI_API_KEY). */
export function defaultModelId(): string {
  return process.env.CREWLINE_MODEL?.trim() || 'openai:gpt-4o-mini';
}

export interface AgentOptions {
  /** Who the agent is; `{placeholder}`s are filled from the kickoff inputs. */
  role: string;
  /** What the agent wants; `{placeholder}`s are filled. */
  goal: string;
  /** The agent's background; `{placeholder}`s are filled. */
  backstory: string;
  /**
   * The model: an AI SDK `LanguageModel`, or a `provider:model` id (`'openai:gpt-4o-mini'`,
   * `'anthropic:claude-sonnet-4-5'`, `'ollama:llama3.1'`, `'offline:default'`). Checkpoints store the
   * id. Default: `CREWLINE_MODEL`, else `'openai:gpt-4o-mini'`.
   */
  llm?: LanguageModel | string;
  /** Tools the agent may call. Checkpoints store their names. Default: none. */
  tools?: CrewlineTool[];
  /** Most LLM calls per task (or per standalone kickoff). Default `25`. */
  maxIterations?: number;
  /** Per-call model settings (temperature, maxOutputTokens, providerOptions). Default: the provider's. */
  settings?: ModelCallSettings;
  /**
   * AI SDK telemetry for this agent's model calls, passed as `experimental_telemetry` (e.g.
   * `{ isEnabled: true, tracer }`). Never stored in a checkpoint: pass it again (the `telemetry`
   * option of `fromCheckpoint` / `fork`) when you resume or fork. Default: none (the crew's, if any).
   */
  telemetry?: TelemetrySettings;
  /**
   * Remember this agent's results (short-term, keyword search) and show relevant ones in its later
   * prompts. Saved in checkpoints. Default `false`.
   */
  memory?: boolean;
  /** Knowledge the agent searches for each task; saved (with content) in checkpoints. Default: none. */
  knowledgeSources?: KnowledgeSource[];
  /**
   * Checkpointing for this agent: `undefined` inherits from its crew or flow, `true` uses defaults,
   * `false` opts this agent's events out, an object is its own config. Default `undefined`.
   */
  checkpoint?: CheckpointSetting;
}

/** What `Agent.fromCheckpoint` and `Agent.fork` accept besides the checkpoint config. */
export interface AgentRestoreOptions {
  /** The bus to emit on. Default: the process-wide `eventBus`. */
  bus?: EventBus;
  /** Tools, models and model providers to rebuild the agent with. Default: what the process registered. */
  registry?: ProjectRegistry;
  /** Telemetry for the continued run's model calls (never stored, so given again here). Default: none. */
  telemetry?: TelemetrySettings;
}

export interface AgentKickoffOptions {
  /** Fills `{placeholder}`s in role, goal and backstory. Default `{}`. */
  inputs?: Record<string, unknown>;
  /**
   * With `restoreFrom`: continue the standalone agent run saved in that checkpoint. Without it: turn
   * checkpointing on for this kickoff with this config.
   */
  fromCheckpoint?: CheckpointConfigInput;
  /** Parse the final answer as JSON matching this schema; see `AgentOutput.structured`. Default: none. */
  outputSchema?: z.ZodType;
  /** Cancels the kickoff between steps and aborts the call in flight. */
  abortSignal?: AbortSignal;
  /**
   * The bus to emit on. Default: the bus of the run this kickoff happens in (a crew or agent kicked
   * off in a flow method joins the flow's run, whatever bus the flow was given), else the
   * process-wide `eventBus`.
   */
  bus?: EventBus;
}
