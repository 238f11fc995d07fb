import type { EventContext } from '@crewline/events';
import type { TelemetrySettings } from 'ai';
import type { z } from 'zod';
import type { AgentLoopResult } from '../agent-loop/agent-loop.js';
import { runAgentLoop } from '../agent-loop/agent-loop.js';
import type { Conversation } from '../agent-loop/conversation.js';
import type { ModelCallSettings } from '../agent-loop/model-step.js';
import { systemPromptFor } from '../cache-preload/system-prompt.js';
import { anyAbortSignal } from '../checkpointing/abort-signals.js';
import type { Run } from '../checkpointing/run.js';
import type { LanguageModelObject } from '../models/model-id.js';
import type { CrewlineTool } from '../tools/define-tool.js';
import { toolsByName } from '../tools/define-tool.js';

/**
 * What a piece of work needs of its agent. `Agent` has it; described here so that agent.ts, which
 * imports this module, is not imported back (no import cycle, type-only ones included).
 */
export interface WorkingAgent {
  readonly tools: readonly CrewlineTool[];
  readonly maxIterations: number;
  readonly settings: ModelCallSettings | undefined;
  readonly telemetry: TelemetrySettings | undefined;
  resolveModel(): { model: LanguageModelObject; modelId: string };
  systemPrompt(inputs: Readonly<Record<string, unknown>>): string;
}

export interface AgentWork {
  agent: WorkingAgent;
  run: Run;
  /** The conversation to continue (mutated in place; empty for a fresh start). */
  conversation: Conversation;
  /** The user message that starts an empty conversation. */
  prompt: string;
  /** Kickoff inputs, for the agent's templated role, goal and backstory. */
  inputs: Readonly<Record<string, unknown>>;
  /** The system prompt text to use instead of the agent's (the one saved when the work started). */
  system?: string;
  /** Split the system prompt into two cache blocks here (a prefix shared by the crew's agents). */
  systemSplitAt?: number;
  context: EventContext;
  outputSchema?: z.ZodType | undefined;
  /** Tools added for this piece of work only (the delegation tool of a manager). */
  extraTools?: readonly CrewlineTool[];
  abortSignal?: AbortSignal | undefined;
  /** Telemetry of the crew the work is for; the agent's own wins. */
  telemetry?: TelemetrySettings | undefined;
}

/**
 * Runs one agent's loop on one piece of work, inside the run: the agent's model, system prompt and
 * tools, the run's emitter. The loop records each step in `conversation` before emitting its event,
 * so whatever checkpoint the run writes can continue this work without paying for a call twice.
 */
export async function runAgentWork(work: AgentWork): Promise<AgentLoopResult> {
  const { agent, run } = work;
  const { model, modelId } = agent.resolveModel();
  const tools = toolsByName([...agent.tools, ...(work.extraTools ?? [])]);
  const abortSignal = anyAbortSignal([work.abortSignal, run.abortSignal, run.fenceSignal]);
  return runAgentLoop({
    model,
    modelId,
    system: systemPromptFor(
      model,
      work.system ?? agent.systemPrompt(work.inputs),
      work.systemSplitAt !== undefined ? { splitAt: work.systemSplitAt } : {},
    ),
    prompt: work.prompt,
    conversation: work.conversation,
    tools,
    maxIterations: agent.maxIterations,
    ...(work.outputSchema ? { outputSchema: work.outputSchema } : {}),
    emit: (source, event) => run.emit(source, event),
    beforeCall: async () => {
      await run.state.durable();
      // Checked after the wait: a store that hangs makes the wait long, and the lease may run out in it.
      await run.ensureLeaseHeld();
    },
    context: work.context,
    ...(abortSignal ? { abortSignal } : {}),
    ...(agent.settings ? { settings: agent.settings } : {}),
    ...telemetryOf(agent.telemetry ?? work.telemetry),
  });
}

function telemetryOf(telemetry: TelemetrySettings | undefined): { telemetry?: TelemetrySettings } {
  return telemetry ? { telemetry } : {};
}
