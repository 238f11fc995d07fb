import type { EntitySummary, StoredCheckpoint } from '@crewline/runtime-state';
import { primaryEntity } from '../core/document-view.js';
import { shortRunId } from '../core/format.js';
import { type BranchNode, buildTree } from '../tui/state/tree.js';
import { type LaneShape, laneRows } from './lane-rows.js';

/** One drawn node: a checkpoint, or a run of consecutive checkpoints of one task collapsed into one. */
export interface GraphNode {
  /** Stable key: the id of its first checkpoint (what `expand` names). */
  key: string;
  /** The checkpoint the node opens: its newest one. */
  id: string;
  /** Checkpoints in the node (1 unless collapsed), oldest first. */
  ids: string[];
  column: number;
  createdAt: string;
  /** Time of the node's first checkpoint (differs from `createdAt` when collapsed). */
  firstAt: string;
  trigger: string;
  /** The primary entity's progress, e.g. `2/3`; absent when it reports none. */
  progress?: string;
  /**
   * What `progress` counts: a crew's tasks, or a flow's methods (the CLI's listing says
   * `flow ReportFlow 0/3`). Absent with `progress`.
   */
  progressUnit?: 'tasks' | 'methods';
  status?: EntitySummary['status'];
  /** The newest checkpoint of its run (lineage) on this lane. */
  head: boolean;
  /** Another lane forks from this checkpoint. */
  forkPoint: boolean;
  /** The checkpoint's parent is neither the node before it nor anywhere in storage (pruned). */
  parentMissing: boolean;
}

/** One run (lineage) on one branch: a row of the graph. */
export interface GraphLane {
  key: string;
  branch: string;
  lineageId: string;
  /** Short form of the lineage id, as `crewline checkpoint list` shows it in RUN. */
  run: string;
  /** Row of the graph, 0 at the top (from {@link laneRows}). */
  row: number;
  /** The checkpoint this lane was forked from (present in storage unless `orphaned`). */
  forkedFrom?: string;
  /** The lane's fork point is not in storage any more (pruned or deleted). */
  orphaned: boolean;
  /**
   * The run's first checkpoints are not in storage any more (`maxCheckpoints` or `prune` trimmed it
   * from its start): the id of the parent of its first kept checkpoint. A gap inside the run, drawn
   * `pruned` as one between two of its nodes, not an orphaned fork.
   */
  prunedBefore?: string;
  nodes: GraphNode[];
}

/** Every run of one entity (kind and name): a block of lanes. */
export interface GraphGroup {
  key: string;
  kind: string;
  name: string;
  count: number;
  lanes: GraphLane[];
}

export interface LineageGraph {
  groups: GraphGroup[];
  /** Checkpoints listed. */
  count: number;
  /** Nodes drawn (after collapsing). */
  nodeCount: number;
  /** Rows of all groups together (a group's rows follow the group before it). */
  rows: number;
  columns: number;
}

export interface LayoutOptions {
  /** Keys of collapsed nodes to draw one checkpoint per node. */
  expand?: ReadonlySet<string>;
  /** Fewest consecutive checkpoints of one task that collapse into one node. Default 3. */
  collapseAt?: number;
}

function progressOf(checkpoint: StoredCheckpoint): Pick<GraphNode, 'progress' | 'progressUnit' | 'status'> {
  const entity = primaryEntity(checkpoint.entities);
  if (!entity) return {};
  return {
    ...(entity.total !== undefined
      ? {
          progress: `${entity.completed ?? 0}/${entity.total}`,
          progressUnit: entity.kind === 'flow' ? 'methods' : 'tasks',
        }
      : {}),
    ...(entity.status !== undefined ? { status: entity.status } : {}),
  };
}

/**
 * The lineage tree (the TUI's `buildTree`: groups by entity, runs per branch, forks under the
 * checkpoint they came from) laid out as lanes: each run of a branch one straight row, a fork's lane
 * starting one column right of its fork point, and the rows chosen by d3-hierarchy's tidy tree
 * ({@link laneRows}: forks below their parent, no two overlapping lanes in one row).
 * Consecutive checkpoints with the same task progress collapse into one node with a count (never a
 * fork point or a head), so long runs stay a few nodes wide.
 */
export function layoutLineage(
  checkpoints: readonly StoredCheckpoint[],
  options: LayoutOptions = {},
): LineageGraph {
  const collapseAt = Math.max(2, options.collapseAt ?? 3);
  const expand = options.expand ?? new Set<string>();
  const stored = new Set(checkpoints.map((checkpoint) => checkpoint.id));
  let columns = 0;
  let nodeCount = 0;

  const nodesOf = (branch: BranchNode, startColumn: number): GraphNode[] => {
    const items = branch.checkpoints;
    const progress = items.map((item) => progressOf(item.checkpoint));
    const taskKeys = progress.map((entry) => `${entry.progress ?? ''}|${entry.status ?? ''}`);
    const nodes: GraphNode[] = [];
    const place = (from: number, size: number) => {
      const members = items.slice(from, from + size);
      const first = members[0]!;
      const last = members.at(-1)!;
      const previous = from > 0 ? items[from - 1]!.checkpoint.id : undefined;
      const parentId = first.checkpoint.parentId;
      const column = startColumn + nodes.length;
      nodes.push({
        key: first.key,
        id: last.checkpoint.id,
        ids: members.map((member) => member.checkpoint.id),
        column,
        createdAt: last.checkpoint.createdAt,
        firstAt: first.checkpoint.createdAt,
        trigger: last.checkpoint.trigger,
        ...progress[from + size - 1]!,
        head: from + size === items.length,
        forkPoint: last.forks.length > 0,
        parentMissing: from > 0 && parentId !== null && parentId !== previous && !stored.has(parentId),
      });
      columns = Math.max(columns, column + 1);
    };
    let index = 0;
    while (index < items.length) {
      let end = index + 1;
      // A run of one task: same progress, no fork point inside, and it stops before the head.
      if (items[index]!.forks.length === 0) {
        while (end < items.length - 1 && items[end]!.forks.length === 0 && taskKeys[end] === taskKeys[index])
          end += 1;
      }
      const size = end - index;
      if (size >= collapseAt && !expand.has(items[index]!.key)) place(index, size);
      else for (let member = index; member < end; member += 1) place(member, 1);
      index = end;
    }
    nodeCount += nodes.length;
    return nodes;
  };

  let rowsAbove = 0;
  const groups: GraphGroup[] = buildTree(checkpoints).map((group) => {
    const lanes: { lane: GraphLane; shape: LaneShape }[] = [];
    const visit = (branch: BranchNode, startColumn: number): LaneShape => {
      const nodes = nodesOf(branch, startColumn);
      const shape: LaneShape = { start: startColumn, length: nodes.length, forks: [] };
      lanes.push({
        shape,
        lane: {
          key: branch.key,
          branch: branch.branch,
          lineageId: branch.lineageId,
          run: shortRunId(branch.lineageId),
          row: 0,
          ...(branch.forkedFrom !== undefined ? { forkedFrom: branch.forkedFrom } : {}),
          orphaned: branch.orphaned,
          ...(branch.prunedBefore !== undefined ? { prunedBefore: branch.prunedBefore } : {}),
          nodes,
        },
      });
      // A fork point is never inside a collapsed node: it is the node whose key is its checkpoint's.
      const indexOfKey = new Map(nodes.map((node, index) => [node.key, index]));
      for (const checkpoint of branch.checkpoints)
        for (const fork of checkpoint.forks) {
          const at = indexOfKey.get(checkpoint.key) ?? 0;
          shape.forks.push({ at, lane: visit(fork, startColumn + at + 1) });
        }
      return shape;
    };
    const top = group.branches.map((branch) =>
      // A lane with a gap before it (a gone fork point, or its own first checkpoints) starts a column in.
      visit(branch, branch.orphaned || branch.prunedBefore !== undefined ? 1 : 0),
    );
    const rows = laneRows(top);
    let groupRows = 0;
    for (const { lane, shape } of lanes) {
      lane.row = rowsAbove + (rows.get(shape) ?? 0);
      groupRows = Math.max(groupRows, (rows.get(shape) ?? 0) + 1);
    }
    rowsAbove += groupRows;
    return {
      key: group.key,
      kind: group.kind,
      name: group.name,
      count: group.count,
      lanes: lanes.map((entry) => entry.lane),
    };
  });
  return { groups, count: checkpoints.length, nodeCount, rows: rowsAbove, columns };
}
