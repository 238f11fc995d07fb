import type { EventRecord } from '@crewline/events';
import {
  describeModelCost,
  describeRunCost,
  lineageCost,
  type ModelPrices,
  type RunCost,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import {
  type ConversationData,
  parseAgentData,
  parseCrewData,
  type UsageData,
} from '@crewline/runtime-state/internal';
import { cliError } from '../core/cli-error.js';
import type { DocumentView, EntityView, TaskView } from '../core/document-view.js';
import type { ForkPoint } from '../core/fork-point.js';

/** One message of a saved agent conversation, as text: tool calls and results written out. */
export interface ConversationMessage {
  role: string;
  text: string;
}

/** The saved conversation of unfinished work (an in-progress task or a standalone agent). */
export interface ConversationDetail {
  messages: ConversationMessage[];
  llmCalls: number;
  usage: UsageData;
}

/** A task as the page shows it: the CLI's view plus the tokens its output cost and whether it was edited. */
export interface TaskDetail extends TaskView {
  /** Number as `info` and `--set-output` count (index + 1). */
  number: number;
  usage?: UsageData;
  edited: boolean;
  /** An in-progress task: the agent's conversation so far, which a resume continues from. */
  conversation?: ConversationDetail;
}

export interface EntityDetail extends Omit<EntityView, 'tasks'> {
  tasks: TaskDetail[];
  usage: UsageData;
  /** A standalone agent's saved conversation. */
  conversation?: ConversationDetail;
}

/**
 * What the model calls cost, per model, from the project's `modelPrices` (crewline keeps no price
 * list: a model without a price is `unknown`, with its tokens); `note` is the line the page shows.
 */
export interface CostDetail extends RunCost {
  note: string;
  /** One line per model: its calls, tokens and cost. */
  modelLines: string[];
  /**
   * For a fork, the calls its history carries from the checkpoint it was forked from (`lineageCost`),
   * not counted in this cost; `null` for a checkpoint that is not a fork's.
   */
  inherited: InheritedCostDetail | null;
}

/** A fork's inherited calls as the page shows them, and the checkpoint it was forked from. */
export interface InheritedCostDetail extends RunCost {
  note: string;
  modelLines: string[];
  forkedFrom: string;
}

/** One event of the history, reduced to what a timeline line shows. */
export interface TimelineEvent {
  sequence: number;
  timestamp: string;
  type: string;
  /** Who emitted it and where: `task research (Researcher)`, `flow Pipeline: plan`… */
  subject?: string;
}

/** Everything the page shows about one checkpoint. */
export interface CheckpointDetail {
  metadata: StoredCheckpoint;
  format: { name: string; version: number; libraryVersion: string };
  inputs: Record<string, unknown>;
  placeholders: string[];
  /** The placeholders nothing gave a value (`DocumentView.missingPlaceholders`, as `info` lists them). */
  missingPlaceholders: string[];
  entities: EntityDetail[];
  usage: UsageData;
  cost: CostDetail;
  /** The newest events, oldest first (at most {@link timelineLimit}). */
  events: TimelineEvent[];
  eventCount: number;
}

/** Events sent per checkpoint: a long run keeps thousands, the page shows the newest. */
export const timelineLimit = 2000;

const noUsage = (): UsageData => ({ inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedInputTokens: 0 });

function addUsage(total: UsageData, usage: UsageData | undefined): void {
  if (!usage) return;
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.totalTokens += usage.totalTokens;
  total.cachedInputTokens += usage.cachedInputTokens;
}

function partText(part: unknown): string {
  if (typeof part === 'string') return part;
  if (part === null || typeof part !== 'object') return JSON.stringify(part);
  const record = part as Record<string, unknown>;
  switch (record.type) {
    case 'text':
    case 'reasoning':
      return String(record.text ?? '');
    case 'tool-call':
      return `→ ${String(record.toolName)}(${JSON.stringify(record.input ?? record.args ?? {})})`;
    case 'tool-result': {
      const output = record.output as { value?: unknown } | undefined;
      const value =
        output !== null && typeof output === 'object' && 'value' in output ? output.value : output;
      return `← ${String(record.toolName)}: ${typeof value === 'string' ? value : JSON.stringify(value)}`;
    }
    default:
      return JSON.stringify(record);
  }
}

/** The AI SDK messages of a conversation as role and text (the stored messages are already redacted). */
export function conversationDetail(conversation: ConversationData): ConversationDetail {
  const messages = conversation.messages.map((message): ConversationMessage => {
    const record = (message ?? {}) as { role?: unknown; content?: unknown };
    const content = record.content;
    const text = Array.isArray(content) ? content.map(partText).join('\n') : partText(content ?? '');
    return { role: typeof record.role === 'string' ? record.role : 'unknown', text };
  });
  return { messages, llmCalls: conversation.llmCalls, usage: conversation.usage };
}

function costLines(cost: RunCost) {
  return { ...cost, note: describeRunCost(cost), modelLines: cost.models.map(describeModelCost) };
}

/** This branch's own calls, a fork's inherited ones apart (the split `checkpoint info` prints). */
function costDetail(
  events: readonly EventRecord[],
  forkPoint: ForkPoint | undefined,
  prices: ModelPrices,
): CostDetail {
  const { own, inherited } = lineageCost(events, forkPoint?.events, prices);
  return {
    ...costLines(own),
    inherited:
      inherited && inherited.models.length > 0
        ? { ...costLines(inherited), forkedFrom: forkPoint!.id }
        : null,
  };
}

function subjectOf(event: EventRecord): string | undefined {
  const context = event.context;
  const parts: string[] = [];
  if (context?.taskName !== undefined) parts.push(`task ${context.taskName}`);
  else if (context?.taskIndex !== undefined) parts.push(`task ${context.taskIndex + 1}`);
  if (context?.methodName !== undefined) parts.push(`method ${context.methodName}`);
  if (context?.agentRole !== undefined) parts.push(`(${context.agentRole})`);
  if (parts.length === 0 && event.source) {
    parts.push(`${event.source.kind}${event.source.name !== undefined ? ` ${event.source.name}` : ''}`);
  }
  return parts.length > 0 ? parts.join(' ') : undefined;
}

/**
 * The detail of a checkpoint from the same view `crewline checkpoint info` prints, plus the token
 * usage of each completed task, read through the crew data's own parser, and the cost of its model
 * calls at `prices` (the project's `modelPrices`; default none): a fork's own apart from those its
 * history carries from `forkPoint` (`findCheckpointForkedFrom`; default none, every call its own).
 */
export function checkpointDetail(
  checkpoint: StoredCheckpoint,
  view: DocumentView,
  prices: ModelPrices = {},
  forkPoint?: ForkPoint,
): CheckpointDetail {
  const { document } = view;
  const total = noUsage();
  const entities = view.entities.map((entity, position): EntityDetail => {
    const snapshot = document.entities[position]!;
    const usage = noUsage();
    const stored = entity.kind === 'crew' ? parseCrewData(snapshot).tasks : [];
    const tasks = entity.tasks.map((task): TaskDetail => {
      const data = stored[task.indexInCrew];
      const output = data?.output ?? undefined;
      addUsage(usage, output?.usage);
      // Unfinished work: the tokens spent so far count too (a resume does not pay them again).
      if (!output) addUsage(usage, data?.conversation?.usage);
      return {
        ...task,
        number: task.index + 1,
        ...(output ? { usage: output.usage } : {}),
        edited: output?.edited ?? false,
        ...(data?.conversation ? { conversation: conversationDetail(data.conversation) } : {}),
      };
    });
    const agentConversation = entity.kind === 'agent' ? parseAgentData(snapshot).conversation : null;
    if (agentConversation) addUsage(usage, agentConversation.usage);
    addUsage(total, usage);
    return {
      ...entity,
      tasks,
      usage,
      ...(agentConversation ? { conversation: conversationDetail(agentConversation) } : {}),
    };
  });
  const events = document.events.slice(-timelineLimit).map((event): TimelineEvent => {
    const subject = subjectOf(event);
    return {
      sequence: event.sequence,
      timestamp: event.timestamp,
      type: event.type,
      ...(subject !== undefined ? { subject } : {}),
    };
  });
  return {
    metadata: checkpoint,
    format: {
      name: document.format,
      version: document.formatVersion,
      libraryVersion: document.libraryVersion,
    },
    inputs: view.inputs,
    placeholders: view.placeholders,
    missingPlaceholders: view.missingPlaceholders,
    entities,
    usage: total,
    cost: costDetail(document.events, forkPoint, prices),
    events,
    eventCount: document.events.length,
  };
}

/**
 * One event of a checkpoint's history, whole: every field it was recorded with. The history is
 * redacted when an event is recorded (`recordEvent`), so this shows nothing the document hides.
 */
export function eventRecord(view: DocumentView, sequence: number): EventRecord {
  const found = view.document.events.find((event) => event.sequence === sequence);
  if (!found) {
    throw cliError(
      'not_found',
      `checkpoint ${view.document.metadata.id} has no event ${sequence}; pick one from its timeline`,
    );
  }
  return found;
}
