import type { ModelMessage } from 'ai';
import type { z } from 'zod';
import type { AgentLoopResult } from '../agent-loop/agent-loop.js';
import type { Conversation, TokenUsage } from '../agent-loop/conversation.js';
import { parseStructuredOutput } from '../agent-loop/structured-output.js';

/** What a standalone `agent.kickoff()` returns. */
export interface AgentOutput {
  /** The final answer. */
  raw: string;
  /** The answer parsed with `outputSchema`; `undefined` without one. */
  structured: unknown;
  agentRole: string;
  /** Tokens of the whole conversation (calls made before a resume included). */
  usage: TokenUsage;
  /** The conversation after the system prompt. */
  messages: ModelMessage[];
}

export function createAgentOutput(
  agentRole: string,
  result: AgentLoopResult,
  conversation: Conversation,
): AgentOutput {
  return {
    raw: result.output,
    structured: result.structured,
    agentRole,
    usage: result.usage,
    messages: [...conversation.messages],
  };
}

/**
 * The output of a kickoff whose conversation finished in an earlier process (a resume of a completed
 * agent): the saved answer, parsed with `outputSchema` the way the agent loop reads a saved answer.
 */
export function savedAgentOutput(
  agentRole: string,
  conversation: Conversation,
  outputSchema: z.ZodType | undefined,
): AgentOutput {
  const output = conversation.output ?? '';
  const parsed = outputSchema ? parseStructuredOutput(output, outputSchema) : undefined;
  return createAgentOutput(
    agentRole,
    { output, structured: parsed?.success ? parsed.value : undefined, usage: { ...conversation.usage } },
    conversation,
  );
}
