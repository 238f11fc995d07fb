import type { AgentDefinitionData, UsageData } from '@crewline/runtime-state/internal';
import type { Agent } from '../agent/agent.js';
import type { TokenUsage } from '../agent-loop/conversation.js';
import type { Settle } from '../checkpointing/snapshot-values.js';
import { byContent, StoredForms } from '../checkpointing/stored-forms.js';

// The parts of a crew's stored data that seldom change while it runs: its agents' definitions and
// the usage of its cache-preload probes. A crew checkpointing on every event stored them hundreds of
// times, each a new object that the unchanged-snapshot comparison and redaction walked again and a
// provider stored again. Kept here between snapshots and settled in the run, they are the very same
// objects each time: recognized at once by all three.

/** One crew's agent list as last stored: the definitions it holds, settled with it. */
interface AgentList {
  agents: readonly Agent[];
  items: AgentDefinitionData[];
}

// By the crew's own agents array: a crew that replaced it gets a new list.
const agentLists = new WeakMap<readonly Agent[], AgentList>();

/**
 * The stored definitions of `agents` (each from `definition`), as the same settled list while every
 * agent gives the very same definition as last time. A definition made afresh (an agent with
 * memory, whose memory changes as it works; an agent whose model or setting changed) makes a new
 * list, settled only when no agent has memory: its definitions are then all settled ones.
 */
export function settledAgentList(
  agents: readonly Agent[],
  settle: Settle,
  definition: (agent: Agent) => AgentDefinitionData,
): AgentDefinitionData[] {
  const items = agents.map(definition);
  const known = agentLists.get(agents);
  if (known !== undefined && known.items.length === items.length) {
    let same = true;
    for (let index = 0; index < items.length && same; index += 1) same = items[index] === known.items[index];
    if (same) return settle(known.items);
  }
  if (agents.some((agent) => Boolean(agent.memory))) {
    agentLists.delete(agents);
    return items;
  }
  const settled = settle(items);
  agentLists.set(agents, { agents, items: settled });
  return settled;
}

// By the usage object: a run adds to it in place, so it is compared by content (every count it
// holds, so one added to TokenUsage later is compared too).
const storedUsages = new StoredForms({
  sources: (usage: TokenUsage, _context: undefined) => [byContent(usage)] as const,
  build: ([usage]): UsageData => ({ ...usage }),
});

/** A copy of `usage` for a checkpoint: the same settled object while its counts stay the same. */
export function settledUsage(usage: TokenUsage, settle: Settle): UsageData {
  return settle(storedUsages.stored(usage, undefined, settle));
}
