import { entityLabel } from './entity-label.js';
import { formatClock, oneLine, truncate } from './format.js';
import type { TaskNumbering } from './task-numbering.js';

/** The fields of an event the progress lines use (a live event or its stored record). */
export interface ProgressEvent {
  type: string;
  timestamp?: string;
  context?: {
    crewId?: string;
    taskIndex?: number;
    taskName?: string;
    agentRole?: string;
    methodName?: string;
  };
  [field: string]: unknown;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function taskLabel(
  event: ProgressEvent,
  numbering: TaskNumbering | undefined,
  clean: (text: string) => string,
): string {
  const index = event.context?.taskIndex;
  const number =
    typeof index === 'number'
      ? (numbering?.label(event.context?.crewId, index) ?? `task ${index + 1}`)
      : 'task';
  const name = event.context?.taskName ?? text(event.description);
  // Cleaned before it is cut: a secret the cut splits is no longer recognized afterwards.
  return name ? `${number} ${truncate(oneLine(clean(name)), 50)}` : number;
}

/**
 * One progress line for an event of a running resume or fork, or undefined for events too small to
 * show (stream chunks, memory queries...). `width` bounds the line. With `numbering` (the tasks of
 * the checkpoint continued), tasks are numbered across the checkpoint, as `info` numbers them;
 * without it, within their crew. `clean` (the caller's redaction; required, so that no caller
 * forgets it) is applied to a text before any part of it is cut to fit; the caller cleans the whole
 * line too.
 */
export function progressLine(
  event: ProgressEvent,
  width = 100,
  numbering: TaskNumbering | undefined,
  clean: (text: string) => string,
): string | undefined {
  let line: string | undefined;
  const crewId = event.context?.crewId;
  switch (event.type) {
    case 'crew_kickoff_started':
      if (crewId !== undefined) numbering?.crewStarted(crewId, text(event.crewName));
      line = `${entityLabel('crew', text(event.crewName))} started`;
      break;
    case 'crew_kickoff_completed':
      if (crewId !== undefined) numbering?.crewEnded(crewId);
      line = `${entityLabel('crew', text(event.crewName))} completed`;
      break;
    case 'crew_kickoff_failed':
      if (crewId !== undefined) numbering?.crewEnded(crewId);
      line = `${entityLabel('crew', text(event.crewName))} failed: ${oneLine(text(event.error))}`;
      break;
    case 'task_started':
      line = `${taskLabel(event, numbering, clean)} started${event.context?.agentRole ? ` (${event.context.agentRole})` : ''}`;
      break;
    case 'task_completed':
      line = `${taskLabel(event, numbering, clean)} completed: ${oneLine(text(event.output))}`;
      break;
    case 'task_failed':
      line = `${taskLabel(event, numbering, clean)} failed: ${oneLine(text(event.error))}`;
      break;
    case 'llm_call_completed': {
      const usage = event.usage as { totalTokens?: number } | undefined;
      line = `  model ${text(event.model)} answered${usage?.totalTokens !== undefined ? ` (${usage.totalTokens} tokens)` : ''}`;
      break;
    }
    case 'llm_call_failed':
      line = `  model ${text(event.model)} failed: ${oneLine(text(event.error))}`;
      break;
    case 'tool_usage_finished':
      line = `  tool ${text(event.toolName)} finished`;
      break;
    case 'tool_usage_error':
      line = `  tool ${text(event.toolName)} failed: ${oneLine(text(event.error))}`;
      break;
    case 'flow_started':
      line = `flow ${text(event.flowName)} started`;
      break;
    case 'flow_finished':
      line = `flow ${text(event.flowName)} finished`;
      break;
    case 'method_execution_started':
      line = `method ${text(event.methodName)} started`;
      break;
    case 'method_execution_finished':
      line = `method ${text(event.methodName)} finished`;
      break;
    case 'method_execution_failed':
      line = `method ${text(event.methodName)} failed: ${oneLine(text(event.error))}`;
      break;
    case 'lite_agent_execution_completed':
      line = `agent ${text(event.role)} finished`;
      break;
    case 'checkpoint_completed':
      line = `  checkpoint ${text(event.checkpointId)} written (${text(event.trigger)})`;
      break;
    case 'checkpoint_failed':
      line = `  checkpoint failed: ${oneLine(text(event.error))}`;
      break;
    case 'checkpoint_fork_completed':
      line = `forked onto branch ${text(event.branch)}`;
      break;
    default:
      return undefined;
  }
  const clock = event.timestamp ? `${formatClock(event.timestamp)} ` : '';
  return truncate(`${clock}${line}`, width);
}
