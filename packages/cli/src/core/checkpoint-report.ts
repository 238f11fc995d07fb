import {
  describeModelCost,
  describeRunCost,
  type LoadedCheckpoint,
  type RunCost,
} from '@crewline/runtime-state';
import type { DocumentView, EntityView, TaskView } from './document-view.js';
import { entityLabel } from './entity-label.js';
import { formatBytes, formatTime, formatValue, oneLine, truncate } from './format.js';
import { displayPath } from './location.js';

const statusLabels: Record<TaskView['status'], string> = {
  completed: 'done',
  running: 'running',
  pending: 'pending',
  failed: 'failed',
};

/** `[done]`, `[pending]`… padded to one width so task lines align. */
export function taskStatusLabel(status: TaskView['status']): string {
  return `[${statusLabels[status]}]`.padEnd(9);
}

export interface ReportOptions {
  cwd: string;
  /** Whole outputs instead of one-line previews. Default false. */
  full?: boolean;
  /** Width previews are cut to. Default 100. */
  width?: number;
  /** The parent is not in the location any more: marked `(pruned)`. Default false. */
  parentPruned?: boolean;
  /** The parent is still stored but cannot be read (damaged): marked `(unreadable)`. Default false. */
  parentUnreadable?: boolean;
  /** What the checkpoint's model calls cost (`runCost`): a `Cost:` line and one line per model. Default: not shown. */
  cost?: RunCost;
  /**
   * A fork's calls inherited from the checkpoint it was forked from (`lineageCost`): an `Inherited:`
   * line after the cost, apart from it so adding up forks counts each call once. Default: none.
   */
  inheritedCost?: RunCost | null;
  /** The checkpoint the fork was forked from, named on the `Inherited:` line. Default: not named. */
  forkedFrom?: string | null;
}

/**
 * `crew Research (1a2b3c4d) completed - 2/2 tasks completed`. A crew's or agent's id is generated
 * (a uuid: its first 8 characters tell it apart); a flow's is its state id, a name the user chose
 * and resumes by, so it is printed whole.
 */
export function entityHeading(entity: EntityView): string {
  const done = entity.tasks.filter((task) => task.status === 'completed').length;
  const progress = entity.tasks.length > 0 ? ` - ${done}/${entity.tasks.length} tasks completed` : '';
  const id = entity.kind === 'flow' ? entity.id : entity.id.slice(0, 8);
  return `${entityLabel(entity.kind, entity.name)} (${id})${entity.status ? ` ${entity.status}` : ''}${progress}`;
}

/** The task lines of `info`: number, status, description, agent, then the output (preview or whole). */
export function taskLines(tasks: readonly TaskView[], options: ReportOptions): string[] {
  const width = options.width ?? 100;
  const lines: string[] = [];
  for (const task of tasks) {
    const number = `${task.index + 1}.`.padStart(4);
    const agent = task.agentRole ? ` (${task.agentRole})` : '';
    lines.push(
      `${number} ${taskStatusLabel(task.status)} ${truncate(oneLine(task.name ?? task.description), width - 20)}${agent}`,
    );
    if (task.output !== undefined) {
      if (options.full) {
        for (const line of task.output.split('\n')) lines.push(`       | ${line}`);
      } else {
        lines.push(`       -> ${truncate(oneLine(task.output), width - 10)}`);
      }
    }
  }
  return lines;
}

/** A stored value on a `key = value` line: whole with --full, else cut to what the width leaves. */
function shownValue(value: unknown, key: string, indent: number, options: ReportOptions): string {
  const text = formatValue(value);
  return options.full ? text : truncate(text, (options.width ?? 100) - key.length - indent);
}

/** A standalone agent's answer: a one-line preview, or with --full every line of it (as task outputs). */
function answerLines(answer: string, options: ReportOptions): string[] {
  if (!options.full) return [`  Answer: ${truncate(oneLine(answer), (options.width ?? 100) - 10)}`];
  return ['  Answer:', ...answer.split('\n').map((line) => `       | ${line}`)];
}

/**
 * `Cost:` in US dollars (or why it is unknown), then each model's calls, tokens and cost; for a fork,
 * `Inherited:` and the calls of the history it was forked from the same way.
 */
function costLines(cost: RunCost, options: ReportOptions): string[] {
  const lines = [
    `  Cost:      ${describeRunCost(cost)}`,
    ...cost.models.map((model) => `             ${describeModelCost(model)}`),
  ];
  const inherited = options.inheritedCost;
  if (inherited && inherited.models.length > 0) {
    const from = options.forkedFrom ? ` (${options.forkedFrom})` : '';
    lines.push(
      `  Inherited: ${describeRunCost(inherited)}: the calls of the checkpoint this branch was forked from${from}, not counted above`,
      ...inherited.models.map((model) => `             ${describeModelCost(model)}`),
    );
  }
  return lines;
}

/** Everything `crewline checkpoint info` prints about one checkpoint. */
export function checkpointReport(
  loaded: LoadedCheckpoint,
  view: DocumentView,
  options: ReportOptions,
): string[] {
  const { checkpoint } = loaded;
  const { metadata } = view.document;
  const lines = [
    `Checkpoint ${metadata.id}`,
    `  Reference: ${displayPath(checkpoint.reference, options.cwd)}`,
    `  Time:      ${formatTime(metadata.createdAt)} (${metadata.createdAt})`,
    `  Size:      ${formatBytes(checkpoint.sizeBytes)}`,
    `  Trigger:   ${metadata.trigger}`,
    `  Branch:    ${metadata.branch}`,
    `  Parent:    ${
      metadata.parentId === null
        ? '(none - first checkpoint of its lineage)'
        : `${metadata.parentId}${options.parentPruned ? ' (pruned)' : options.parentUnreadable ? ' (unreadable)' : ''}`
    }`,
    `  Lineage:   ${metadata.lineageId}`,
    `  Events:    ${metadata.eventCount}`,
    ...(options.cost ? costLines(options.cost, options) : []),
    `  Format:    ${view.document.format} v${view.document.formatVersion}, written by crewline ${view.document.libraryVersion}`,
    '',
  ];
  const inputKeys = Object.keys(view.inputs);
  const missing = view.missingPlaceholders;
  lines.push(inputKeys.length === 0 ? 'Inputs: (none)' : 'Inputs:');
  for (const key of inputKeys) lines.push(`  ${key} = ${shownValue(view.inputs[key], key, 5, options)}`);
  if (missing.length > 0)
    lines.push(`  placeholders without a value: ${missing.map((name) => `{${name}}`).join(', ')}`);
  for (const entity of view.entities) {
    lines.push('', entityHeading(entity));
    if (entity.kind === 'flow') {
      lines.push(
        `  Completed methods: ${entity.completedMethods.length > 0 ? entity.completedMethods.join(', ') : '(none)'}`,
      );
      if (entity.state) {
        const keys = Object.keys(entity.state);
        lines.push(`  State: ${keys.length} key${keys.length === 1 ? '' : 's'}`);
        // --full asks for everything: no key left out, no value cut.
        const shown = options.full ? keys : keys.slice(0, 10);
        for (const key of shown) lines.push(`    ${key} = ${shownValue(entity.state[key], key, 7, options)}`);
        if (keys.length > shown.length) lines.push(`    ... ${keys.length - shown.length} more`);
      }
    }
    if (entity.kind === 'agent' && entity.agents[0]) {
      lines.push(
        `  Role: ${entity.agents[0].role}${entity.agents[0].goal ? ` - goal: ${oneLine(entity.agents[0].goal)}` : ''}`,
      );
    }
    if (entity.messageCount !== undefined)
      lines.push(`  Conversation: ${entity.messageCount} messages saved`);
    if (entity.answer !== undefined) lines.push(...answerLines(entity.answer, options));
    lines.push(...taskLines(entity.tasks, options));
  }
  return lines;
}
