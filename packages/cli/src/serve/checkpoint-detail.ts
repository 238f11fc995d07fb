import type { EventRecord } from '@crewline/events';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { parseCrewData, type UsageData } from '@crewline/runtime-state/internal';
import type { DocumentView, EntityView, TaskView } from '../core/document-view.js';

/** A task as the page shows it: the CLI's view plus the tokens its output cost and whether it was edited. */
export interface TaskDetail extends TaskView {
  /** Number as `info` and `--set-output` count (index + 1). */
  number: number;
  usage?: UsageData;
  edited: boolean;
}

export interface EntityDetail extends Omit<EntityView, 'tasks'> {
  tasks: TaskDetail[];
  usage: UsageData;
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
  entities: EntityDetail[];
  usage: UsageData;
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
 * usage of each completed task, read through the crew data's own parser.
 */
export function checkpointDetail(checkpoint: StoredCheckpoint, view: DocumentView): CheckpointDetail {
  const { document } = view;
  const total = noUsage();
  const entities = view.entities.map((entity, position): EntityDetail => {
    const snapshot = document.entities[position]!;
    const usage = noUsage();
    const stored = entity.kind === 'crew' ? parseCrewData(snapshot).tasks : [];
    const tasks = entity.tasks.map((task): TaskDetail => {
      const output = stored[task.indexInCrew]?.output ?? undefined;
      addUsage(usage, output?.usage);
      return {
        ...task,
        number: task.index + 1,
        ...(output ? { usage: output.usage } : {}),
        edited: output?.edited ?? false,
      };
    });
    addUsage(total, usage);
    return { ...entity, tasks, usage };
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
    entities,
    usage: total,
    events,
    eventCount: document.events.length,
  };
}
