import type { EntityKind, StoredCheckpoint } from '@crewline/runtime-state';
import { primaryEntity } from '../../core/document-view.js';
import { isPersistedStateBranch } from '../../core/persisted-branch.js';

/** A checkpoint in the tree; `forks` are the branches that started from it. */
export interface CheckpointNode {
  type: 'checkpoint';
  key: string;
  checkpoint: StoredCheckpoint;
  /** Its place in its run, 1 for the run's first checkpoint: tells apart rows written in one second. */
  sequence: number;
  /** Branches that started from it: forks, and further continuations of it on its own run. */
  forks: BranchNode[];
}

/**
 * One run of one entity on one branch (a lineage: a kickoff and its resumptions), its checkpoints
 * oldest first. Separate runs that share a branch name (every run writes to `main` by default) are
 * separate nodes, never interleaved.
 */
export interface BranchNode {
  type: 'branch';
  key: string;
  branch: string;
  lineageId: string;
  /** Another run of the same entity has the same branch name: the label names the run too. */
  sharesBranchName: boolean;
  checkpoints: CheckpointNode[];
  /** The checkpoint this branch started from, when it is a fork. */
  forkedFrom?: string;
  /** Its fork point is not in storage any more (deleted); `forkedFrom` names it. */
  orphaned: boolean;
  /**
   * The run's first checkpoints are not in storage any more (`maxCheckpoints` or `prune` trimmed it
   * from its start): the id of the parent of its first kept checkpoint. Not an orphaned fork: see
   * {@link startsRuns}.
   */
  prunedBefore?: string;
  /**
   * Set on a second continuation of a checkpoint of the same run (resumed twice, or resumed after the
   * run had gone past it): the checkpoints written from it, nested under it beside the first one.
   */
  resumedFrom?: string;
}

/** All checkpoints of one entity (kind and name), e.g. every run of `crew Research`. */
export interface GroupNode {
  type: 'group';
  key: string;
  kind: EntityKind | 'unknown';
  name: string;
  count: number;
  /** Time of its newest checkpoint. */
  latestAt: string;
  /** Id of its newest checkpoint (ids sort in creation order; breaks ties of equal times). */
  latestId: string;
  branches: BranchNode[];
}

export type TreeNode = GroupNode | BranchNode | CheckpointNode;

const kindOrder: Record<GroupNode['kind'], number> = { flow: 0, crew: 1, agent: 2, unknown: 3 };

function groupOf(checkpoint: StoredCheckpoint): { kind: GroupNode['kind']; name: string } {
  const entity = primaryEntity(checkpoint.entities);
  return entity ? { kind: entity.kind, name: entity.name } : { kind: 'unknown', name: '(no entity)' };
}

function byId(a: StoredCheckpoint, b: StoredCheckpoint): number {
  // Ids sort in creation order; the time decides first so ids from other writers interleave right.
  return a.createdAt < b.createdAt
    ? -1
    : a.createdAt > b.createdAt
      ? 1
      : a.id < b.id
        ? -1
        : a.id > b.id
          ? 1
          : 0;
}

/**
 * The chain of its run that `node` continues: its lane, unless its parent is an earlier checkpoint
 * of the run that another one already continues (the same checkpoint resumed twice); then a chain
 * nested under that parent, so the tree shows the two children side by side, not as one line.
 * `chains` maps each checkpoint of the group to the chain it is in.
 */
function chainOf(
  lane: BranchNode,
  node: CheckpointNode,
  parent: CheckpointNode | undefined,
  chains: Map<string, BranchNode>,
): BranchNode {
  const parentChain = parent && chains.get(parent.key);
  if (
    parent === undefined ||
    parentChain === undefined ||
    parentChain.lineageId !== lane.lineageId ||
    parentChain.branch !== lane.branch
  )
    return lane;
  if (parentChain.checkpoints.at(-1) === parent) return parentChain;
  const chain: BranchNode = {
    type: 'branch',
    key: `${lane.key}/from:${node.key}`,
    branch: lane.branch,
    lineageId: lane.lineageId,
    sharesBranchName: false,
    checkpoints: [],
    orphaned: false,
    resumedFrom: parent.key,
  };
  parent.forks.push(chain);
  return chain;
}

/**
 * A branch runs start on (`main`, or a persisted flow state's `flow-states/<id>`), where a lane whose
 * first kept checkpoint's parent is gone is taken for a run trimmed from its start. Retention never
 * removes a fork point nor a fork's first checkpoint, so a gone parent is a trimmed start unless a
 * checkpoint was deleted by hand (or by an older crewline): a fork onto `main` (only where it was
 * empty) or a persisted flow's fork (`Flow.fork` writes onto `flow-states/<new id>`) whose fork point
 * was deleted so is drawn as trimmed too. The listing keeps no word of a gone parent's run, so this
 * is a best guess; elsewhere (a fork's own branch) a gone parent is an orphaned fork.
 */
function startsRuns(branch: string): boolean {
  return branch === 'main' || isPersistedStateBranch(branch);
}

/**
 * Builds the browser's tree: groups by entity (flows first, then crews, then agents), then runs on
 * their branches. A run whose first checkpoint's parent is a checkpoint of another run is nested
 * under that checkpoint (forks of forks too); a run whose parent is not in storage any more stays at
 * the top of its group, marked orphaned. Runs at the top: `main` first, then by time.
 */
export function buildTree(checkpoints: readonly StoredCheckpoint[]): GroupNode[] {
  const groups = new Map<string, { kind: GroupNode['kind']; name: string; items: StoredCheckpoint[] }>();
  for (const checkpoint of checkpoints) {
    const { kind, name } = groupOf(checkpoint);
    const key = `${kind}:${name}`;
    let group = groups.get(key);
    if (!group) {
      group = { kind, name, items: [] };
      groups.set(key, group);
    }
    group.items.push(checkpoint);
  }
  const result: GroupNode[] = [];
  for (const [groupKey, group] of groups) {
    const items = [...group.items].sort(byId);
    const branches = new Map<string, BranchNode>();
    const nodes = new Map<string, CheckpointNode>();
    const lanes = new Map<string, BranchNode>();
    const sequences = new Map<string, number>();
    const chains = new Map<string, BranchNode>();
    for (const checkpoint of items) {
      const laneKey = `${checkpoint.branch}/run:${checkpoint.lineageId}`;
      let branch = branches.get(laneKey);
      if (!branch) {
        branch = {
          type: 'branch',
          key: `${groupKey}/branch:${laneKey}`,
          branch: checkpoint.branch,
          lineageId: checkpoint.lineageId,
          sharesBranchName: false,
          checkpoints: [],
          orphaned: false,
        };
        branches.set(laneKey, branch);
      }
      const node: CheckpointNode = {
        type: 'checkpoint',
        key: checkpoint.id,
        checkpoint,
        sequence: (sequences.get(laneKey) ?? 0) + 1,
        forks: [],
      };
      sequences.set(laneKey, node.sequence);
      nodes.set(checkpoint.id, node);
      lanes.set(checkpoint.id, branch);
      const parent = checkpoint.parentId === null ? undefined : nodes.get(checkpoint.parentId);
      const chain = chainOf(branch, node, parent, chains);
      chain.checkpoints.push(node);
      chains.set(checkpoint.id, chain);
    }
    const runsPerName = new Map<string, number>();
    for (const branch of branches.values())
      runsPerName.set(branch.branch, (runsPerName.get(branch.branch) ?? 0) + 1);
    for (const branch of branches.values()) branch.sharesBranchName = runsPerName.get(branch.branch)! > 1;
    const topLevel: BranchNode[] = [];
    for (const branch of branches.values()) {
      const first = branch.checkpoints[0]!.checkpoint;
      const parentId = first.parentId;
      const parent = parentId ? nodes.get(parentId) : undefined;
      if (parent && lanes.get(parentId!) !== branch) {
        branch.forkedFrom = parentId!;
        parent.forks.push(branch);
      } else {
        // A run that continues from an earlier checkpoint of itself or has no parent is a root;
        // one whose parent is missing was trimmed from its start on a branch runs start on, else
        // is a fork whose fork point is gone (deleted, another location): an orphan.
        if (parentId !== null && parent === undefined) {
          if (startsRuns(branch.branch)) branch.prunedBefore = parentId;
          else {
            branch.orphaned = true;
            branch.forkedFrom = parentId;
          }
        }
        topLevel.push(branch);
      }
    }
    topLevel.sort((a, b) => {
      if (a.branch === 'main' && b.branch !== 'main') return -1;
      if (b.branch === 'main' && a.branch !== 'main') return 1;
      return byId(a.checkpoints[0]!.checkpoint, b.checkpoints[0]!.checkpoint);
    });
    result.push({
      type: 'group',
      key: groupKey,
      kind: group.kind,
      name: group.name,
      count: items.length,
      latestAt: items.at(-1)!.createdAt,
      latestId: items.at(-1)!.id,
      branches: topLevel,
    });
  }
  // Within a kind, the group used most recently comes first.
  const newestFirst = (a: GroupNode, b: GroupNode) =>
    a.latestAt !== b.latestAt
      ? a.latestAt > b.latestAt
        ? -1
        : 1
      : a.latestId > b.latestId
        ? -1
        : a.latestId < b.latestId
          ? 1
          : 0;
  return result.sort((a, b) => kindOrder[a.kind] - kindOrder[b.kind] || newestFirst(a, b));
}

/** A line of the tree as displayed: a node and how deep it is. */
export interface TreeRow {
  node: TreeNode;
  depth: number;
  /** The node has children (it can be expanded or collapsed). */
  expandable: boolean;
  expanded: boolean;
}

function childrenOf(node: TreeNode): TreeNode[] {
  if (node.type === 'group') return node.branches;
  if (node.type === 'branch') return node.checkpoints;
  return node.forks;
}

/** The visible rows: every node whose ancestors are all expanded, in display order. */
export function visibleRows(groups: readonly GroupNode[], collapsed: ReadonlySet<string>): TreeRow[] {
  const rows: TreeRow[] = [];
  const visit = (node: TreeNode, depth: number) => {
    const children = childrenOf(node);
    const expanded = children.length > 0 && !collapsed.has(node.key);
    rows.push({ node, depth, expandable: children.length > 0, expanded });
    if (expanded) for (const child of children) visit(child, depth + 1);
  };
  for (const group of groups) visit(group, 0);
  return rows;
}

/** The checkpoint node with this id, anywhere in the tree. */
export function findCheckpointNode(groups: readonly GroupNode[], id: string): CheckpointNode | undefined {
  const search = (nodes: readonly TreeNode[]): CheckpointNode | undefined => {
    for (const node of nodes) {
      if (node.type === 'checkpoint' && node.key === id) return node;
      const found = search(childrenOf(node));
      if (found) return found;
    }
    return undefined;
  };
  return search(groups);
}

/** Keys of every ancestor of the node `key` (to expand them so it becomes visible). */
export function ancestorKeys(groups: readonly GroupNode[], key: string): string[] {
  const path: string[] = [];
  const search = (node: TreeNode): boolean => {
    if (node.key === key) return true;
    path.push(node.key);
    for (const child of childrenOf(node)) if (search(child)) return true;
    path.pop();
    return false;
  };
  for (const group of groups) if (search(group)) return path;
  return [];
}
