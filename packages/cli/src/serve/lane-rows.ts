import { type HierarchyPointNode, hierarchy, tree } from 'd3-hierarchy';

/** What placing a lane needs: where it starts, how long it is, and the lanes that fork from it. */
export interface LaneShape {
  /** Column of the lane's first node. */
  start: number;
  /** Nodes on the lane. */
  length: number;
  /** Lanes forked from it, each with the index (on this lane) of the node it was forked from. */
  forks: { at: number; lane: LaneShape }[];
}

/**
 * What d3's tidy tree places. A lane is an invisible root with two children: the chain of its nodes,
 * and an invisible shadow chain along it from which its forks hang, each from the shadow of the node
 * it was forked from. Every visible node has at most one child, so no parent is centred between its
 * children and a lane stays one straight row, while a fork's subtree starts in the column after its
 * fork point (depth in the tree is the column). One shadow chain per lane, however many forks it has,
 * keeps the scaffolding as long as the lanes.
 */
type Placed =
  | { kind: 'group'; lanes: readonly LaneShape[] }
  | { kind: 'lane'; lane: LaneShape }
  | { kind: 'node'; lane: LaneShape; index: number }
  /** Beside the lane's node `index`; its children are the lanes forked from node `index + 1`. */
  | { kind: 'shadow'; lane: LaneShape; index: number }
  | { kind: 'spacer'; remaining: number; lane: LaneShape };

/** A lane's forks by the index of their fork point, and the last such index. */
interface ForkIndex {
  byPoint: Map<number, LaneShape[]>;
  last: number;
}

const forkIndexes = new WeakMap<LaneShape, ForkIndex>();

function forksOf(lane: LaneShape): ForkIndex {
  let index = forkIndexes.get(lane);
  if (!index) {
    index = { byPoint: new Map(), last: -1 };
    for (const fork of lane.forks) {
      index.byPoint.set(fork.at, [...(index.byPoint.get(fork.at) ?? []), fork.lane]);
      index.last = Math.max(index.last, fork.at);
    }
    forkIndexes.set(lane, index);
  }
  return index;
}

/** The lanes forked from node `point` of `lane`, then the shadow that carries the later forks. */
function forksFrom(lane: LaneShape, point: number): Placed[] {
  const forks = forksOf(lane);
  return [
    ...(forks.byPoint.get(point) ?? []).map((fork): Placed => ({ kind: 'lane', lane: fork })),
    ...(forks.last > point ? [{ kind: 'shadow' as const, lane, index: point }] : []),
  ];
}

function childrenOf(placed: Placed): Placed[] | undefined {
  switch (placed.kind) {
    case 'group':
      // Lanes of the group's top level (a run, or a branch whose fork point is gone) start at their
      // own column: reached through as many spacers.
      return placed.lanes.map((lane) =>
        lane.start > 0 ? { kind: 'spacer', remaining: lane.start, lane } : { kind: 'lane', lane },
      );
    case 'lane':
      // A fork from node 0 starts in the column of node 1: a child of the lane root, as node 0 is.
      return [
        ...(placed.lane.length > 0 ? [{ kind: 'node' as const, lane: placed.lane, index: 0 }] : []),
        ...forksFrom(placed.lane, 0),
      ];
    case 'node':
      return placed.index + 1 < placed.lane.length
        ? [{ kind: 'node', lane: placed.lane, index: placed.index + 1 }]
        : undefined;
    case 'shadow':
      return forksFrom(placed.lane, placed.index + 1);
    case 'spacer':
      return [
        placed.remaining > 1
          ? { kind: 'spacer', remaining: placed.remaining - 1, lane: placed.lane }
          : { kind: 'lane', lane: placed.lane },
      ];
  }
}

/** Breadth a placed thing takes: a node a whole row, the invisible scaffolding none. */
function breadth(node: HierarchyPointNode<Placed>): number {
  return node.data.kind === 'node' ? 1 : 0;
}

/**
 * The row of every lane of one group, from d3-hierarchy's tidy tree (Reingold–Tilford in linear
 * time, Buchheim et al.): forks below the lane they come from, in the order of their fork points,
 * and never two lanes whose columns overlap in one row (the tidy tree keeps the nodes of one column
 * at least their breadth apart). Rows are numbered from 0 in the group, top to bottom.
 */
export function laneRows(lanes: readonly LaneShape[]): Map<LaneShape, number> {
  const root = hierarchy<Placed>({ kind: 'group', lanes }, childrenOf);
  const placed = tree<Placed>()
    .nodeSize([1, 1])
    .separation((a, b) => (breadth(a) + breadth(b)) / 2)(root);
  const positions = new Map<LaneShape, number>();
  for (const child of placed.descendants())
    if (child.data.kind === 'node' && child.data.index === 0)
      // Rounded: the tidy tree's midpoints leave floating-point noise between equal positions.
      positions.set(child.data.lane, Math.round(child.x * 1e6) / 1e6);
  const distinct = [...new Set(positions.values())].sort((a, b) => a - b);
  const rank = new Map(distinct.map((position, index) => [position, index]));
  const rows = new Map<LaneShape, number>();
  const assign = (lane: LaneShape) => {
    rows.set(lane, rank.get(positions.get(lane)!) ?? 0);
    for (const fork of lane.forks) assign(fork.lane);
  };
  for (const lane of lanes) assign(lane);
  return rows;
}
