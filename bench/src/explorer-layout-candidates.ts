// Layout libraries for the explorer's lineage graph, timed on the bench's own listing: the one the
// explorer uses (d3-hierarchy's tidy tree over lanes, in `layoutLineage`) beside the candidates it
// was chosen over, on the same nodes and edges. Run by bench:explorer (explorer-bench.ts).
import { createRequire } from 'node:module';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import dagre from '@dagrejs/dagre';
import { stratify, tree } from 'd3-hierarchy';
import type { ELK as ElkLayout } from 'elkjs/lib/elk-api.js';
// The explorer is not part of @crewline/cli's public entry: the bench lays out with its source.
import { type LaneShape, laneRows } from '../../packages/cli/src/serve/lane-rows.js';
import { type LineageGraph, layoutLineage } from '../../packages/cli/src/serve/lineage-graph.js';
import { formatMs, markdownTable, percentile } from './bench-statistics.js';

// elkjs's bundle is CommonJS whose module.exports is the constructor (its typings say `default`).
const ELK = createRequire(import.meta.url)('elkjs/lib/elk.bundled.js') as new () => ElkLayout;

/** The graph as a general layout library sees it: nodes, and edges along lanes and from fork points. */
function nodesAndEdges(graph: LineageGraph) {
  const nodes: { key: string; lane: string }[] = [];
  const edges: { from: string; to: string }[] = [];
  const nodeOfId = new Map<string, string>();
  for (const group of graph.groups)
    for (const lane of group.lanes)
      for (const node of lane.nodes) {
        nodes.push({ key: node.key, lane: lane.key });
        for (const id of node.ids) nodeOfId.set(id, node.key);
      }
  for (const group of graph.groups)
    for (const lane of group.lanes) {
      lane.nodes.forEach((node, index) => {
        if (index > 0) edges.push({ from: lane.nodes[index - 1]!.key, to: node.key });
      });
      const forkPoint = lane.forkedFrom !== undefined ? nodeOfId.get(lane.forkedFrom) : undefined;
      if (forkPoint !== undefined && lane.nodes[0]) edges.push({ from: forkPoint, to: lane.nodes[0].key });
    }
  return { nodes, edges };
}

/** The lanes of each group as `laneRows` takes them: what the library part of the layout is given. */
function laneShapes(graph: LineageGraph): LaneShape[][] {
  return graph.groups.map((group) => {
    const shapes = new Map(
      group.lanes.map((lane) => [
        lane.key,
        { start: lane.nodes[0]?.column ?? 0, length: lane.nodes.length, forks: [] } as LaneShape,
      ]),
    );
    const placeOfId = new Map<string, { lane: string; at: number }>();
    for (const lane of group.lanes)
      lane.nodes.forEach((node, at) => {
        for (const id of node.ids) placeOfId.set(id, { lane: lane.key, at });
      });
    const top: LaneShape[] = [];
    for (const lane of group.lanes) {
      const from =
        lane.forkedFrom !== undefined && !lane.orphaned ? placeOfId.get(lane.forkedFrom) : undefined;
      if (from) shapes.get(from.lane)!.forks.push({ at: from.at, lane: shapes.get(lane.key)! });
      else top.push(shapes.get(lane.key)!);
    }
    return top;
  });
}

/** How many rows the lane that spans the most rows takes (1 when every lane is one straight row). */
function widestLane(rowOf: Map<string, number>, nodes: { key: string; lane: string }[]): number {
  const rows = new Map<string, Set<number>>();
  for (const node of nodes) {
    const laneRows = rows.get(node.lane) ?? new Set<number>();
    laneRows.add(Math.round(rowOf.get(node.key)! * 1000));
    rows.set(node.lane, laneRows);
  }
  return Math.max(...[...rows.values()].map((set) => set.size));
}

interface Timed {
  milliseconds: number;
  /** Rows the most-spread lane covers, or why there is no layout. */
  outcome: string;
}

async function timed(repeat: number, run: () => Promise<string> | string): Promise<Timed> {
  const times: number[] = [];
  let outcome = '';
  for (let round = 0; round < repeat; round += 1) {
    const started = performance.now();
    try {
      outcome = await run();
    } catch (error) {
      return {
        milliseconds: Number.NaN,
        outcome:
          `failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`.slice(
            0,
            80,
          ),
      };
    }
    times.push(performance.now() - started);
  }
  return {
    milliseconds: percentile(
      [...times].sort((left, right) => left - right),
      0.5,
    ),
    outcome,
  };
}

/** The tidy tree needs one root: the lanes of the graph hang from this one. */
const rootKey = '(lineage)';

/** General layered layouts take seconds past this many nodes: not run there. */
const layeredLimit = 2500;

/**
 * Times each layout on the first 1,000 and on all checkpoints of `listing`, collapsed (as the page
 * opens) and with every collapsed node expanded; returns the report's markdown section.
 */
export async function layoutCandidates(listing: readonly StoredCheckpoint[]): Promise<string> {
  const byTime = [...listing].sort((left, right) => left.createdAt.localeCompare(right.createdAt));
  const rows: string[][] = [];
  for (const size of [1000, listing.length]) {
    const checkpoints = byTime.slice(0, size);
    const collapsed = layoutLineage(checkpoints);
    const expand = new Set(
      collapsed.groups.flatMap((group) =>
        group.lanes.flatMap((lane) =>
          lane.nodes.filter((node) => node.ids.length > 1).map((node) => node.key),
        ),
      ),
    );
    for (const [shape, options] of [
      ['collapsed', {}],
      ['expanded', { expand }],
    ] as const) {
      const graph = layoutLineage(checkpoints, options);
      const { nodes, edges } = nodesAndEdges(graph);
      const label = `${size.toLocaleString('en-US')} checkpoints, ${shape} (${graph.nodeCount.toLocaleString('en-US')} nodes)`;
      const crewline = await timed(5, () => {
        const laidOut = layoutLineage(checkpoints, options);
        const rowOf = new Map<string, number>();
        for (const group of laidOut.groups)
          for (const lane of group.lanes) for (const node of lane.nodes) rowOf.set(node.key, lane.row);
        return `${laidOut.rows} rows, a lane spans ${widestLane(rowOf, nodes)}`;
      });
      const shapes = laneShapes(graph);
      const rowsOnly = await timed(5, () => {
        const rows = shapes.reduce((sum, top) => sum + new Set(laneRows(top).values()).size, 0);
        return `${rows} rows`;
      });
      const tidy = await timed(5, () => {
        const parentOf = new Map(edges.map((edge) => [edge.to, edge.from]));
        const root = stratify<{ key: string }>()
          .id((node) => node.key)
          .parentId((node) => parentOf.get(node.key) ?? (node.key === rootKey ? undefined : rootKey))([
          { key: rootKey },
          ...nodes,
        ]);
        const placed = tree<{ key: string }>().nodeSize([1, 1])(root);
        const rowOf = new Map(placed.descendants().map((node) => [node.data.key, node.x]));
        const top = Math.min(...rowOf.values());
        const bottom = Math.max(...rowOf.values());
        return `${Math.round(bottom - top + 1)} rows, a lane spans ${widestLane(rowOf, nodes)}`;
      });
      const layered = nodes.length > layeredLimit;
      const dagreTime = layered
        ? { milliseconds: Number.NaN, outcome: `not run (over ${layeredLimit} nodes)` }
        : await timed(1, () => {
            const graphlib = new dagre.graphlib.Graph();
            graphlib.setGraph({ rankdir: 'LR', nodesep: 20, ranksep: 40 });
            graphlib.setDefaultEdgeLabel(() => ({}));
            for (const node of nodes) graphlib.setNode(node.key, { width: 40, height: 40 });
            for (const edge of edges) graphlib.setEdge(edge.from, edge.to);
            dagre.layout(graphlib);
            const rowOf = new Map(nodes.map((node) => [node.key, graphlib.node(node.key).y / 60]));
            return `a lane spans ${widestLane(rowOf, nodes)} rows`;
          });
      const elkTime = layered
        ? { milliseconds: Number.NaN, outcome: `not run (over ${layeredLimit} nodes)` }
        : await timed(1, async () => {
            const laidOut = await new ELK().layout({
              id: 'lineage',
              layoutOptions: { 'elk.algorithm': 'layered', 'elk.direction': 'RIGHT' },
              children: nodes.map((node) => ({ id: node.key, width: 40, height: 40 })),
              edges: edges.map((edge, index) => ({
                id: `e${index}`,
                sources: [edge.from],
                targets: [edge.to],
              })),
            });
            const rowOf = new Map((laidOut.children ?? []).map((node) => [node.id, (node.y ?? 0) / 60]));
            return `a lane spans ${widestLane(rowOf, nodes)} rows`;
          });
      for (const [name, result] of [
        ['crewline: `layoutLineage` (lineage tree, collapsing, lane rows)', crewline],
        ['crewline: of which the lane rows (`laneRows`, d3-hierarchy tidy tree over lanes)', rowsOnly],
        ['d3-hierarchy tidy tree over nodes', tidy],
        ['@dagrejs/dagre 3.1.3, left to right', dagreTime],
        ['elkjs 0.12.1 layered, left to right', elkTime],
      ] as const)
        rows.push([label, name, formatMs(result.milliseconds), result.outcome]);
    }
  }
  return [
    '**Layout**: the lineage laid out in Node by each candidate on the same nodes and edges (median of 5',
    'for the d3-hierarchy layouts, one run for the layered ones), the first 1,000 checkpoints by time and',
    'all of them, collapsed as the page opens and with every collapsed node expanded. "A lane spans N',
    'rows": 1 means every branch is one straight lane.',
    '',
    markdownTable(['graph', 'layout', 'ms', 'shape'], rows),
  ].join('\n');
}
