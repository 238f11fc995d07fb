import type { ModelMessage } from 'ai';
import type { AgentLoopResult } from '../agent-loop/agent-loop.js';
import type { Conversation, TokenUsage } from '../agent-loop/conversation.js';

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
