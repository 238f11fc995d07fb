// Which completions a checkpoint holds, and which model requests a resumed process repeated.
// A request is identified by its prompt (the offline model is deterministic: the same prompt is the
// same call, with the same answer) and placed by its conversation (agent role and task index) and
// its turn (assistant messages already in its prompt): the completion of request (conversation,
// turn) is the conversation's assistant message number turn + 1.
import type { CheckpointDocument } from '@crewline/runtime-state';
import { conversationKey, type RequestEntry } from './call-log.js';

interface SavedCrew {
  agents?: { role?: string }[];
  tasks?: {
    agent?: number;
    status?: string;
    conversation?: { messages?: { role?: string }[] } | null;
  }[];
}

/** Completions per conversation; a conversation seen twice keeps its larger count. */
type Completions = Map<string, number>;

function keepLarger(completions: Completions, key: string, count: number): void {
  if (key !== '') completions.set(key, Math.max(completions.get(key) ?? 0, count));
}

/**
 * Completions a checkpoint can give back, per conversation, over every crew it holds (a flow's crews
 * included): every one for a completed task (its output is saved), else the assistant messages of
 * its saved conversation. This is what a resume can reuse.
 */
export function savedCompletions(document: CheckpointDocument): Completions {
  const completions: Completions = new Map();
  for (const entity of document.entities) {
    if (entity.kind !== 'crew') continue;
    const crew = entity.data as SavedCrew;
    for (const [index, task] of (Array.isArray(crew.tasks) ? crew.tasks : []).entries()) {
      const role = crew.agents?.[task.agent ?? -1]?.role;
      const assistantMessages = (task.conversation?.messages ?? []).filter(
        (message) => message.role === 'assistant',
      ).length;
      keepLarger(
        completions,
        conversationKey(role, index),
        task.status === 'completed' ? Number.POSITIVE_INFINITY : assistantMessages,
      );
    }
  }
  return completions;
}

/**
 * Completions a checkpoint's event history records, per conversation (`llm_call_completed` events).
 * A stricter reading of "checkpointed": the answer is in the checkpoint even if only in its history.
 */
export function recordedCompletions(document: CheckpointDocument): Completions {
  const completions: Completions = new Map();
  for (const event of document.events) {
    if (event.type !== 'llm_call_completed') continue;
    const key = conversationKey(event.context?.agentRole, event.context?.taskIndex);
    keepLarger(completions, key, (completions.get(key) ?? 0) + 1);
  }
  return completions;
}

/** True when the completion of `request` is among the `completions` per conversation. */
function isCovered(request: RequestEntry, completions: Completions): boolean {
  return request.conversation !== '' && request.turn < (completions.get(request.conversation) ?? 0);
}

export interface CallAnalysisInput {
  /** Requests the killed process made, in order. */
  killed: readonly RequestEntry[];
  /** Requests the resuming process made, in order. */
  resumed: readonly RequestEntry[];
  /** Keys of the requests whose answer reached the killed process (the user paid for them). */
  arrived: ReadonlySet<string>;
  /** The checkpoint resumed from; undefined when the kill came before the first checkpoint. */
  checkpoint: CheckpointDocument | undefined;
  /** Prompt keys of the uninterrupted run: any other prompt means the resumed run went elsewhere. */
  referenceKeys: ReadonlySet<string>;
}

export interface CallAnalysis {
  /** Requests of the killed process whose completion the checkpoint holds (conversations/outputs). */
  checkpointed: number;
  /** Resumed requests identical to one whose completion was checkpointed (the bar: 0). */
  repeated: RequestEntry[];
  /** Resumed requests identical to one whose `llm_call_completed` event was checkpointed. */
  repeatedByEvents: RequestEntry[];
  /**
   * Resumed requests at a position (conversation, turn) whose completion the checkpoint holds, whatever their
   * prompt: catches a repeat even if the resumed prompt differs from the first one.
   */
  repeatedByPosition: RequestEntry[];
  /**
   * Resumed requests identical to a killed one whose completion was not checkpointed: the answers
   * lost with the kill and the calls still in flight (their answer never came; repeating them is
   * unavoidable).
   */
  remade: number;
  /** Requests of the killed process whose answer arrived. */
  arrived: number;
  /**
   * Resumed requests identical to a killed one whose answer had arrived: calls the user paid for
   * twice. Those whose answer was checkpointed are also in `repeated`; the others are answers lost
   * because their checkpoint was not durable when the process died.
   */
  paidTwice: RequestEntry[];
  /** The part of `paidTwice` whose answer was not in the checkpoint resumed from. */
  paidTwiceUncheckpointed: RequestEntry[];
  /** Checkpointed completions the killed process never logged as arrived (the call log is wrong). */
  checkpointedNotArrived: number;
  /** Resumed requests whose prompt the uninterrupted run never sent. */
  unknownPrompts: RequestEntry[];
}

/** Compares the killed and the resumed process's requests against what the checkpoint holds. */
export function analyzeCalls(input: CallAnalysisInput): CallAnalysis {
  const saved = input.checkpoint ? savedCompletions(input.checkpoint) : new Map<string, number>();
  const recorded = input.checkpoint ? recordedCompletions(input.checkpoint) : new Map<string, number>();
  const checkpointedKeys = new Set<string>();
  const recordedKeys = new Set<string>();
  const killedKeys = new Set<string>();
  for (const request of input.killed) {
    killedKeys.add(request.key);
    if (isCovered(request, saved)) checkpointedKeys.add(request.key);
    if (isCovered(request, recorded)) recordedKeys.add(request.key);
  }
  const paidTwice = input.resumed.filter(
    (request) => killedKeys.has(request.key) && input.arrived.has(request.key),
  );
  return {
    checkpointed: checkpointedKeys.size,
    repeated: input.resumed.filter((request) => checkpointedKeys.has(request.key)),
    repeatedByEvents: input.resumed.filter((request) => recordedKeys.has(request.key)),
    repeatedByPosition: input.resumed.filter((request) => isCovered(request, saved)),
    remade: input.resumed.filter(
      (request) => killedKeys.has(request.key) && !checkpointedKeys.has(request.key),
    ).length,
    arrived: [...killedKeys].filter((key) => input.arrived.has(key)).length,
    paidTwice,
    paidTwiceUncheckpointed: paidTwice.filter((request) => !checkpointedKeys.has(request.key)),
    checkpointedNotArrived: [...checkpointedKeys].filter((key) => !input.arrived.has(key)).length,
    unknownPrompts: input.resumed.filter((request) => !input.referenceKeys.has(request.key)),
  };
}
