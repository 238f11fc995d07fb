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
 * What d3's tidy tree places. A lane is an invisible root whose first child is the chain of its
 * nodes and whose other children lead to its forks through chains of invisible spacers, one per
 * column between the lane's start and its fork point: every visible node has at most one child, so
 * no parent is centred between its children and a lane stays one straight row, while the fork's
 * subtree still starts in the column after its fork point (depth in the tree is the column).
 */
type Placed =
  | { kind: 'group'; lanes: readonly LaneShape[] }
  | { kind: 'lane'; lane: LaneShape }
  | { kind: 'node'; lane: LaneShape; index: number }
  | { kind: 'spacer'; remaining: number; lane: LaneShape };

function towards(lane: LaneShape, columns: number): Placed {
  return columns > 0 ? { kind: 'spacer', remaining: columns, lane } : { kind: 'lane', lane };
}

function childrenOf(placed: Placed): Placed[] | undefined {
  switch (placed.kind) {
    case 'group':
      // Lanes of the group's top level (a run, or a branch whose fork point is gone) start at their
      // own column: reached through as many spacers.
      return placed.lanes.map((lane) => towards(lane, lane.start));
    case 'lane':
      return [
        ...(placed.lane.length > 0 ? [{ kind: 'node' as const, lane: placed.lane, index: 0 }] : []),
        ...[...placed.lane.forks].sort((a, b) => a.at - b.at).map((fork) => towards(fork.lane, fork.at)),
      ];
    case 'node':
      return placed.index + 1 < placed.lane.length
        ? [{ kind: 'node', lane: placed.lane, index: placed.index + 1 }]
        : undefined;
    case 'spacer':
      return [towards(placed.lane, placed.remaining - 1)];
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
