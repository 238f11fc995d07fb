// The lineage graph as SVG: one lane per run of a branch, forks drawn from the checkpoint they came
// from, heads and pruned parents marked (zoom and pan are pan-and-zoom.js's).
//
// Only what lies in a region around the view is in the document, and far out each lane is an
// overview of three elements (its line, its nodes as one dotted path, its head) rather than an
// element group per node: every SVG element costs paint time on each pan or zoom frame, and 10,000
// checkpoints are about 1,000 nodes and 10,000 elements (bench/results/explorer.md).
import { entityLabel, formatClock, formatTime, plural, s } from './dom.js';

const columnWidth = 120;
const rowHeight = 84;
const labelWidth = 190;
const groupGap = 40;
const top = 36;

function shortTrigger(trigger) {
  return trigger.replace(/_/g, ' ');
}

/** Room around a node's centre that shows it whole: its HEAD mark above, its three lines below. */
export const nodeMargin = { x: columnWidth / 2, y: 64 };

const positionsOf = new WeakMap();

/** Positions every node: `{ x, y }` by node key, and by checkpoint id for every id a node holds. */
export function positions(graph) {
  // The same graph is drawn again on every redraw of a pan or zoom: its positions are computed once.
  const known = positionsOf.get(graph);
  if (known) return known;
  const computed = computePositions(graph);
  positionsOf.set(graph, computed);
  return computed;
}

function computePositions(graph) {
  const byKey = new Map();
  const byId = new Map();
  const lanes = [];
  graph.groups.forEach((group, groupIndex) => {
    for (const lane of group.lanes) {
      const y = top + lane.row * rowHeight + groupIndex * groupGap + groupGap;
      lanes.push({ lane, group, y });
      for (const node of lane.nodes) {
        const place = { x: labelWidth + node.column * columnWidth + columnWidth / 2, y, node, lane };
        byKey.set(node.key, place);
        for (const id of node.ids) byId.set(id, place);
      }
    }
  });
  const width = labelWidth + Math.max(1, graph.columns) * columnWidth + 40;
  const height = top + graph.rows * rowHeight + graph.groups.length * groupGap + groupGap + 20;
  return { byKey, byId, lanes, width, height };
}

function nodeClasses(node, selection) {
  return [
    'node',
    node.head && 'head',
    node.forkPoint && 'fork-point',
    node.ids.length > 1 && 'collapsed',
    node.status && `status-${node.status}`,
    node.ids.includes(selection.open) && 'open',
    selection.compare.some((id) => node.ids.includes(id)) && 'compared',
    selection.continuing?.some((id) => node.ids.includes(id)) && 'continuing',
  ]
    .filter(Boolean)
    .join(' ');
}

/** `2/3 tasks` for a crew, `0/3 methods` for a flow: what the server's count counts. */
function progressText(node) {
  return `${node.progress} ${node.progressUnit ?? 'tasks'}`;
}

function drawNode(place, selection) {
  const { node } = place;
  const title = `${node.ids.length > 1 ? `${plural(node.ids.length, 'checkpoint')}, ${formatTime(node.firstAt)} to ` : ''}${formatTime(node.createdAt)}\n${node.id}\n${node.trigger}${node.progress ? `, ${progressText(node)}` : ''}`;
  const mark =
    node.ids.length > 1
      ? [
          s('rect', { x: -18, y: -12, width: 36, height: 24, rx: 8, class: 'shape' }),
          s('text', { class: 'count', y: 4 }, `×${node.ids.length}`),
        ]
      : [s('circle', { r: node.head ? 11 : 8, class: 'shape' })];
  return s(
    'g',
    {
      class: nodeClasses(node, selection),
      transform: `translate(${place.x} ${place.y})`,
      'data-id': node.id,
      'data-key': node.key,
      'data-branch': place.lane.branch,
      tabindex: 0,
      role: 'button',
      'aria-label': `checkpoint ${node.id} on ${place.lane.branch}`,
    },
    s('title', null, title),
    // The whole node area answers clicks, not only the circle and the letters.
    s('rect', { class: 'hit', x: -columnWidth / 2 + 6, y: -30, width: columnWidth - 12, height: 88 }),
    // A run started from the page continues this checkpoint: a turning ring until it finishes.
    selection.continuing?.some((id) => node.ids.includes(id))
      ? s('circle', { r: 17, class: 'continuing-ring' }, s('title', null, 'a run continues from here'))
      : null,
    mark,
    node.head ? s('text', { class: 'head-label', y: -18 }, 'HEAD') : null,
    s('text', { class: 'trigger', y: 26 }, shortTrigger(node.trigger)),
    s('text', { class: 'time', y: 39 }, formatClock(node.createdAt)),
    node.progress ? s('text', { class: 'progress', y: 52 }, progressText(node)) : null,
  );
}

function overlaps(region, left, top, right, bottom) {
  return (
    !region ||
    (right >= region.x &&
      left <= region.x + region.width &&
      bottom >= region.y &&
      top <= region.y + region.height)
  );
}

/** What the last detailed draw into an svg left there: its node elements by key, and for which graph. */
const drawnNodes = new WeakMap();

/** A lane far out: its line, its nodes as one path of round dots, its head (the lane's newest node). */
function drawOverview(place, placed, region, margin) {
  const { y } = place;
  const inside = placed.filter((entry) =>
    overlaps(region, entry.x - margin.x, y - margin.y, entry.x + margin.x, y + margin.y),
  );
  if (inside.length === 0) return null;
  const head = placed.at(-1);
  return s(
    'g',
    { class: 'overview', 'data-branch': place.lane.branch },
    s('path', { class: 'edge', d: `M ${inside[0].x} ${y} H ${inside.at(-1).x}` }),
    // A zero-length segment with round caps is a dot: one element for every node of the lane.
    s('path', { class: 'overview-nodes', d: inside.map((entry) => `M ${entry.x} ${y} h 0`).join(' ') }),
    head?.node.head && inside.includes(head)
      ? s('circle', { class: 'overview-head', cx: head.x, cy: y, r: 14 })
      : null,
  );
}

/**
 * Draws the graph into `svg` (its contents are replaced): the parts inside `region` (graph units,
 * `{ x, y, width, height, detail }`; everything when absent), each node with its text when
 * `detail`, else each lane as an overview (click one to zoom in there).
 */
export function drawGraph(svg, graph, selection, region) {
  const layout = positions(graph);
  const detail = region?.detail ?? true;
  const margin = { x: columnWidth, y: rowHeight };
  const edges = s('g', { class: 'edges' });
  const nodes = s('g', { class: 'nodes' });
  const labels = s('g', { class: 'labels' });
  graph.groups.forEach((group, groupIndex) => {
    if (group.lanes.length === 0) return;
    const firstRow = Math.min(...group.lanes.map((lane) => lane.row));
    const y = top + firstRow * rowHeight + groupIndex * groupGap + groupGap - rowHeight / 2 - 4;
    if (!overlaps(region, 0, y - margin.y, labelWidth, y + margin.y)) return;
    labels.append(
      s(
        'text',
        { class: 'group-label', x: 12, y: Math.max(16, y) },
        `${entityLabel(group.kind, group.name)} · ${plural(group.count, 'checkpoint')}`,
      ),
    );
  });
  for (const place of layout.lanes) {
    const { lane, y } = place;
    const placed = lane.nodes.map((node) => layout.byKey.get(node.key));
    const first = placed[0];
    const fork = lane.forkedFrom && !lane.orphaned ? layout.byId.get(lane.forkedFrom) : undefined;
    // A lane off the region is skipped whole, unless its fork curve comes into it from above.
    const laneTop = Math.min(y, fork?.y ?? y) - margin.y;
    if (!overlaps(region, 0, laneTop, layout.width, y + margin.y)) continue;
    labels.append(
      s(
        'g',
        { class: `lane-label${lane.orphaned ? ' orphaned' : ''}`, 'data-branch': lane.branch },
        s('text', { x: 12, y: y - 4, class: 'branch' }, lane.branch),
        s('text', { x: 12, y: y + 12, class: 'run' }, `run ${lane.run}`),
      ),
    );
    if (detail) {
      for (let index = 1; index < placed.length; index += 1) {
        const from = placed[index - 1];
        const to = placed[index];
        if (!overlaps(region, from.x, y - margin.y, to.x, y + margin.y)) continue;
        edges.append(
          s('line', {
            x1: from.x,
            y1: y,
            x2: to.x,
            y2: y,
            class: to.node.parentMissing ? 'edge gap' : 'edge',
          }),
        );
        if (to.node.parentMissing)
          edges.append(s('text', { class: 'pruned-label', x: (from.x + to.x) / 2, y: y - 6 }, 'pruned'));
      }
    } else {
      const overview = drawOverview(place, placed, region, margin);
      if (overview) nodes.append(overview);
    }
    if (!first) continue;
    if (lane.orphaned || lane.prunedBefore) {
      // A gap before the lane's first node: a fork whose fork point is gone (red label), or a run
      // whose first checkpoints were pruned (a gap of its own run, as between two of its nodes).
      // The words stay short and over the gap, clear of the lane's label; the id is in the title.
      const x = first.x - columnWidth;
      const gone = lane.orphaned ? lane.forkedFrom : lane.prunedBefore;
      edges.append(s('line', { x1: x, y1: y, x2: first.x, y2: y, class: 'edge gap' }));
      edges.append(
        s(
          'text',
          {
            class: `pruned-label${lane.orphaned ? ' orphaned' : ''}`,
            x: first.x - columnWidth / 2,
            y: y - 8,
          },
          lane.orphaned ? 'parent pruned' : 'pruned',
          s(
            'title',
            null,
            lane.orphaned
              ? `the checkpoint this branch came from, ${gone ?? '(unknown)'}, is not in storage any more`
              : `the run's checkpoints before this one (from ${gone}) were pruned`,
          ),
        ),
      );
    } else if (fork && overlaps(region, fork.x, fork.y, first.x, first.y)) {
      const middle = (fork.x + first.x) / 2;
      edges.append(
        s('path', {
          class: 'edge fork',
          d: `M ${fork.x} ${fork.y} C ${middle} ${fork.y}, ${middle} ${first.y}, ${first.x} ${first.y}`,
        }),
      );
    }
  }
  if (!detail) {
    drawnNodes.delete(svg);
    svg.replaceChildren(edges, labels, nodes);
    return layout;
  }
  // A pan or zoom that redraws the same graph keeps the node elements still in the region where they
  // are: only the nodes that came into it are made, only those that left are removed, so the browser
  // styles and lays out the difference rather than every node again.
  const selectionKey = JSON.stringify(selection);
  const previous = drawnNodes.get(svg);
  const reuse =
    previous?.graph === graph &&
    previous.selectionKey === selectionKey &&
    [previous.group, previous.edges, previous.labels].every((part) => part.parentNode === svg);
  const group = reuse ? previous.group : nodes;
  const kept = new Map();
  for (const place of layout.byKey.values()) {
    if (!overlaps(region, place.x - margin.x, place.y - margin.y, place.x + margin.x, place.y + margin.y))
      continue;
    let element = reuse ? previous.elements.get(place.node.key) : undefined;
    if (!element) {
      element = drawNode(place, selection);
      group.append(element);
    }
    kept.set(place.node.key, element);
  }
  if (reuse) {
    for (const [key, element] of previous.elements) if (!kept.has(key)) element.remove();
    svg.replaceChild(edges, previous.edges);
    svg.replaceChild(labels, previous.labels);
  } else svg.replaceChildren(edges, labels, group);
  drawnNodes.set(svg, { graph, selectionKey, group, edges, labels, elements: kept });
  return layout;
}
