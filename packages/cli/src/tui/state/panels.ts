import type { StoredCheckpoint } from '@crewline/runtime-state';
import { type DocumentView, inputNames, primaryEntity, type TaskView } from '../../core/document-view.js';
import { entityLabel } from '../../core/entity-label.js';
import {
  formatAge,
  formatBytes,
  formatClock,
  formatTime,
  formatValue,
  oneLine,
  shortRunId,
} from '../../core/format.js';
import type { Edits } from './browser-state.js';
import type { TreeRow } from './tree.js';

/** A run of text with one style. Colour is applied only when the terminal wants it. */
export interface Segment {
  text: string;
  color?: 'green' | 'yellow' | 'red' | 'cyan' | 'magenta' | 'gray';
  bold?: boolean;
  /** Reverse video: the selected row, the cursor. */
  inverse?: boolean;
  /**
   * A line of this one segment (a hint in words) is wrapped between words to its panel's width
   * instead of being cut at its edge (see detailPanel).
   */
  wrap?: boolean;
  /**
   * Given up first when the line is wider than its panel (see clipLine): cut short, ending in `~`,
   * so that the segments after it stay whole. A lane's branch name (`flow-states/<uuid>` fills a
   * tree panel at 80 columns) is, so its marks (orphaned, earlier pruned) stay in view.
   */
  shrink?: boolean;
}

export type Line = Segment[];

export const plain = (text: string): Line => [{ text }];

/** One line of the tree: indentation, an expand marker, and what the node is. */
export function treeRowLine(row: TreeRow, edited: ReadonlySet<string>, now: number): Line {
  const indent = '  '.repeat(row.depth);
  const marker = row.expandable ? (row.expanded ? '- ' : '+ ') : '  ';
  const node = row.node;
  if (node.type === 'group') {
    return [
      { text: `${indent}${marker}` },
      { text: entityLabel(node.kind, node.name), bold: true, color: 'cyan' },
      { text: ` (${node.count}) ${formatAge(node.latestAt, now)}`, color: 'gray' },
    ];
  }
  if (node.type === 'branch') {
    const line: Line = [
      { text: `${indent}${marker}` },
      { text: node.branch, color: 'magenta', shrink: true },
      { text: node.sharesBranchName ? ` run ${shortRunId(node.lineageId)}` : '', color: 'gray' },
      { text: ` (${node.checkpoints.length})` },
    ];
    if (node.orphaned) line.push({ text: ' orphaned', color: 'yellow' });
    // Trimmed by retention: its first checkpoints are gone, nothing is wrong with the run.
    if (node.prunedBefore !== undefined) line.push({ text: ' earlier pruned', color: 'gray' });
    if (node.resumedFrom !== undefined) line.push({ text: ' resumed again', color: 'yellow' });
    return line;
  }
  const checkpoint = node.checkpoint;
  const progress = progressText(checkpoint);
  // The number in its run tells apart checkpoints written within one second (a `'*'` run); the edit
  // mark and progress come before the trigger, which is what a narrow panel cuts. The mark goes with
  // the number and a dot sets the progress apart from the trigger: "1/2 * task done" read as a
  // product, "2/2 task done" as a sentence.
  const line: Line = [{ text: `${indent}${marker}` }, { text: `#${node.sequence}`, color: 'gray' }];
  if (edited.has(checkpoint.id)) line.push({ text: '*', color: 'yellow', bold: true });
  line.push(
    { text: ` ${formatClock(checkpoint.createdAt)} ` },
    { text: progress.text, color: progress.complete ? 'green' : undefined },
    { text: progress.text ? ' · ' : '', color: 'gray' },
    { text: triggerLabel(checkpoint.trigger) },
  );
  return line;
}

const triggerSubjects: Record<string, string> = {
  llm_call: 'llm',
  tool_usage: 'tool',
  method_execution: 'method',
  crew_kickoff: 'kickoff',
  agent_execution: 'agent',
};

const triggerOutcomes: Record<string, string> = {
  completed: 'done',
  finished: 'done',
  started: 'start',
  failed: 'failed',
};

/**
 * A trigger as a short label for a narrow column: `llm_call_started` → `llm start`,
 * `task_completed` → `task done`, `method_execution_finished` → `method done`; signals and names
 * it does not know keep their words (underscores as spaces).
 */
export function triggerLabel(trigger: string): string {
  const match = /^(.*)_(completed|finished|started|failed)$/.exec(trigger);
  if (!match) return trigger.replaceAll('_', ' ');
  const subject = triggerSubjects[match[1]!] ?? match[1]!.replaceAll('_', ' ');
  return `${subject} ${triggerOutcomes[match[2]!]}`;
}

/**
 * `2/4` progress of a checkpoint's run, as the explorer's graph counts it: its primary entity's
 * (a flow's methods, else a crew's tasks); complete when all are done. Not a sum over the
 * entities: a flow's crews and agents enter its checkpoints one by one (and after a resume, a crew
 * rejoins only once its method runs again), so the sum's total went 4/7 -> 4/6 -> 4/7 on
 * neighbouring checkpoints; the flow's methods are known from its first checkpoint.
 */
export function progressText(checkpoint: StoredCheckpoint): { text: string; complete: boolean } {
  const entity = primaryEntity(checkpoint.entities);
  if (entity?.total === undefined || entity.total === 0) return { text: '', complete: false };
  const completed = entity.completed ?? 0;
  return { text: `${completed}/${entity.total}`, complete: completed === entity.total };
}

const statusMarks: Record<TaskView['status'], Segment> = {
  completed: { text: '[x]', color: 'green' },
  running: { text: '[>]', color: 'yellow' },
  pending: { text: '[ ]', color: 'gray' },
  failed: { text: '[!]', color: 'red' },
};

/** The Overview tab: metadata, each entity's state, and what the run did. */
export function overviewLines(view: DocumentView, checkpoint: StoredCheckpoint, edits: Edits): Line[] {
  const metadata = view.document.metadata;
  const lines: Line[] = [
    [
      { text: 'Id       ', color: 'gray' },
      { text: metadata.id, bold: true },
    ],
    [{ text: 'Time     ', color: 'gray' }, { text: formatTime(metadata.createdAt) }],
    [{ text: 'Trigger  ', color: 'gray' }, { text: metadata.trigger }],
    [
      { text: 'Branch   ', color: 'gray' },
      { text: metadata.branch, color: 'magenta' },
    ],
    [{ text: 'Parent   ', color: 'gray' }, { text: metadata.parentId ?? '(none)' }],
    [{ text: 'Events   ', color: 'gray' }, { text: String(metadata.eventCount) }],
    [{ text: 'Size     ', color: 'gray' }, { text: formatBytes(checkpoint.sizeBytes) }],
  ];
  for (const entity of view.entities) {
    lines.push(plain(''));
    const done = entity.tasks.filter((task) => task.status === 'completed').length;
    lines.push([
      { text: entityLabel(entity.kind, entity.name), bold: true, color: 'cyan' },
      { text: entity.tasks.length > 0 ? `  ${done}/${entity.tasks.length} tasks` : '' },
      { text: entity.status ? `  ${entity.status}` : '', color: 'gray' },
    ]);
    for (const agent of entity.agents.slice(0, 6)) {
      lines.push(plain(`  agent ${agent.role}${agent.model ? ` (${agent.model})` : ''}`));
    }
    if (entity.agents.length > 6) lines.push(plain(`  ... ${entity.agents.length - 6} more agents`));
    if (entity.kind === 'flow') {
      if (entity.pause) {
        lines.push([
          {
            text: `  waits for an answer in ${entity.pause.method}: ${oneLine(entity.pause.message)}`,
            color: 'yellow',
            bold: true,
          },
        ]);
      }
      lines.push(plain(`  completed: ${entity.completedMethods.join(', ') || '(none)'}`));
      for (const [key, value] of Object.entries(entity.state ?? {}).slice(0, 8)) {
        lines.push(plain(`  state.${key} = ${oneLine(formatValue(value))}`));
      }
    }
    if (entity.messageCount !== undefined)
      lines.push(plain(`  conversation: ${entity.messageCount} messages`));
    const running = entity.tasks.find((task) => task.status === 'running');
    if (running)
      lines.push(
        plain(`  in progress: task ${running.index + 1} ${oneLine(running.name ?? running.description)}`),
      );
  }
  const editedOutputs = Object.keys(edits.outputs).length;
  const editedInputs = Object.keys(edits.inputs).length;
  lines.push(plain(''));
  // A resume without an answer asks the question again, and the run panel then takes the answer.
  // Hints in words, wrapped to the panel (at 80 columns it is 43 wide); the keys come first.
  if (primaryEntity(view.entities)?.pause)
    lines.push([
      {
        text: 'to answer: e resume asks the question again, then a types the answer',
        color: 'yellow',
        wrap: true,
      },
    ]);
  if (editedOutputs + editedInputs > 0)
    lines.push(
      [{ text: `Edited: ${editedOutputs} output(s), ${editedInputs} input(s)`, color: 'yellow', wrap: true }],
      [{ text: 'e resume / f fork runs them', color: 'yellow' }],
    );
  else
    lines.push(
      [{ text: 'e resume  f fork', color: 'gray' }],
      [{ text: 'to edit: 2 Tasks (outputs), 3 Inputs', color: 'gray', wrap: true }],
    );
  return lines;
}

/** The Tasks tab: one line per task, a preview of each output under it. */
export function taskLines(view: DocumentView, edits: Edits): { lines: Line[]; itemStarts: number[] } {
  const lines: Line[] = [];
  const itemStarts: number[] = [];
  for (const task of view.tasks) {
    itemStarts.push(lines.length);
    const edited = task.index in edits.outputs;
    lines.push([
      statusMarks[task.status],
      { text: ` ${task.index + 1}. ${oneLine(task.name ?? task.description)}` },
      { text: edited ? ' *edited' : '', color: 'yellow', bold: true },
    ]);
    const output = edited ? edits.outputs[task.index] : task.output;
    if (output !== undefined)
      lines.push([{ text: `    ${oneLine(output)}`, color: edited ? 'yellow' : 'gray' }]);
    else if (task.agentRole) lines.push([{ text: `    (${task.agentRole})`, color: 'gray' }]);
  }
  if (view.tasks.length === 0) lines.push(plain('(no tasks in this checkpoint)'));
  return { lines, itemStarts };
}

/** The Inputs tab: each kickoff input and each placeholder without a value. */
export function inputLines(view: DocumentView, edits: Edits): { lines: Line[]; itemStarts: number[] } {
  const lines: Line[] = [];
  const itemStarts: number[] = [];
  for (const key of inputNames(view)) {
    itemStarts.push(lines.length);
    const known = Object.hasOwn(view.inputs, key);
    const edited = Object.hasOwn(edits.inputs, key);
    const value = edited ? edits.inputs[key] : view.inputs[key];
    lines.push([
      { text: `${key} = ` },
      {
        text: edited || known ? oneLine(formatValue(value)) : '(no value)',
        color: edited ? 'yellow' : known ? undefined : 'gray',
      },
      {
        text: edited ? ' *edited' : known ? '' : `  placeholder {${key}}`,
        color: edited ? 'yellow' : 'gray',
      },
    ]);
  }
  if (lines.length === 0) lines.push(plain('(no inputs and no placeholders)'));
  return { lines, itemStarts };
}

export const helpLines: readonly string[] = [
  'Keys',
  '  up/down, j/k     move            pgup/pgdn, g/G   page, first/last',
  '  left/right, h/l  collapse/expand (tree) or switch tab (detail)',
  '  enter            open a checkpoint, or edit the output or input at the cursor',
  '  tab              tree <-> detail      1 2 3  Overview, Tasks, Inputs tabs',
  '  u                undo the edit under the cursor',
  '  e                resume the selected checkpoint (with your edits)',
  '  f                fork it onto a new branch (with your edits)',
  '  r                refresh          ?  this help     q  quit',
  '',
  'Editing: type to change, enter saves, esc cancels, ctrl+j new line,',
  '  ctrl+u clears to the start, ctrl+k to the end.',
  'Editing an output re-runs the later tasks of its crew; an edited input reaches',
  '  only tasks that have not run yet. A * after #N marks a checkpoint with edits.',
  '',
  'Press any key to close this help.',
];
