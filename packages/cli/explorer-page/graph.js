// The lineage graph as SVG: one lane per run of a branch, forks drawn from the checkpoint they came
// from, heads and pruned parents marked. Zoom with the wheel or the buttons, pan by dragging.
//
// Only what lies in a region around the view is in the document, and far out a node is drawn
// without its text: every SVG element costs paint time on each pan or zoom frame, and 10,000
// checkpoints are about 1,000 nodes and 10,000 elements (bench/results/explorer.md).
import { formatClock, formatTime, s } from './dom.js';

const columnWidth = 120;
const rowHeight = 84;
const labelWidth = 190;
const groupGap = 40;
const top = 36;

function shortTrigger(trigger) {
  return trigger.replace(/_/g, ' ');
}

/** Positions every node: `{ x, y }` by node key, and by checkpoint id for every id a node holds. */
export function positions(graph) {
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
  ]
    .filter(Boolean)
    .join(' ');
}

/** Below this many screen pixels per graph unit, nodes are drawn without their text. */
const detailScale = 0.35;

function drawNode(place, selection, detail) {
  const { node } = place;
  const title = `${node.ids.length > 1 ? `${node.ids.length} checkpoints, ${formatTime(node.firstAt)} to ` : ''}${formatTime(node.createdAt)}\n${node.id}\n${node.trigger}${node.progress ? `, ${node.progress} tasks` : ''}`;
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
    detail ? mark : mark[0],
    detail && node.head ? s('text', { class: 'head-label', y: -18 }, 'HEAD') : null,
    detail ? s('text', { class: 'trigger', y: 26 }, shortTrigger(node.trigger)) : null,
    detail ? s('text', { class: 'time', y: 39 }, formatClock(node.createdAt)) : null,
    detail && node.progress ? s('text', { class: 'progress', y: 52 }, `${node.progress} tasks`) : null,
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

/**
 * Draws the graph into `svg` (its contents are replaced): the parts inside `region` (graph units,
 * `{ x, y, width, height, detail }`; everything when absent), nodes with their text when `detail`.
 */
export function drawGraph(svg, graph, selection, region) {
  const layout = positions(graph);
  const detail = region?.detail ?? true;
  const margin = { x: columnWidth, y: rowHeight };
  const edges = s('g', { class: 'edges' });
  const nodes = s('g', { class: 'nodes' });
  const labels = s('g', { class: 'labels' });
  graph.groups.forEach((group, groupIndex) => {
    const first = group.lanes[0];
    if (!first) return;
    const y = top + first.row * rowHeight + groupIndex * groupGap + groupGap - rowHeight / 2 - 4;
    if (!overlaps(region, 0, y - margin.y, labelWidth, y + margin.y)) return;
    labels.append(
      s(
        'text',
        { class: 'group-label', x: 12, y: Math.max(16, y) },
        `${group.kind} ${group.name} · ${group.count} checkpoints`,
      ),
    );
  });
  for (const { lane, y } of layout.lanes) {
    const placed = lane.nodes.map((node) => layout.byKey.get(node.key));
    const head = placed[0];
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
    if (!head) continue;
    if (lane.orphaned) {
      const x = head.x - columnWidth;
      edges.append(s('line', { x1: x, y1: y, x2: head.x, y2: y, class: 'edge gap' }));
      edges.append(
        s(
          'text',
          { class: 'pruned-label', x, y: y - 8 },
          `parent ${lane.forkedFrom ?? ''} pruned`,
          s('title', null, 'the checkpoint this branch came from is not in storage any more'),
        ),
      );
    } else if (fork) {
      const parent = fork;
      if (overlaps(region, parent.x, parent.y, head.x, head.y)) {
        const middle = (parent.x + head.x) / 2;
        edges.append(
          s('path', {
            class: 'edge fork',
            d: `M ${parent.x} ${parent.y} C ${middle} ${parent.y}, ${middle} ${head.y}, ${head.x} ${head.y}`,
          }),
        );
      }
    }
  }
  for (const place of layout.byKey.values()) {
    if (overlaps(region, place.x - margin.x, place.y - margin.y, place.x + margin.x, place.y + margin.y))
      nodes.append(drawNode(place, selection, detail));
  }
  svg.replaceChildren(edges, labels, nodes);
  return layout;
}

/**
 * Zoom and pan by changing the `viewBox` of `svg`; `onChange(view)` after every change. Returns
 * `fit()` to show the whole graph, `region()` to draw around the view, `covers(region)`.
 */
export function panAndZoom(svg, { onChange } = {}) {
  let box = { x: 0, y: 0, width: 800, height: 500 };
  let content = { width: 800, height: 500 };
  const apply = () => {
    svg.setAttribute('viewBox', `${box.x} ${box.y} ${box.width} ${box.height}`);
    onChange?.();
  };
  const detailed = () => {
    const width = svg.getBoundingClientRect().width;
    return width === 0 || width / box.width >= detailScale;
  };
  const zoom = (factor, centerX = box.x + box.width / 2, centerY = box.y + box.height / 2) => {
    const width = Math.min(Math.max(box.width * factor, 100), Math.max(content.width, content.height) * 4);
    const scale = width / box.width;
    box = {
      x: centerX - (centerX - box.x) * scale,
      y: centerY - (centerY - box.y) * scale,
      width,
      height: box.height * scale,
    };
    apply();
  };
  const toGraph = (event) => {
    const rect = svg.getBoundingClientRect();
    return {
      x: box.x + ((event.clientX - rect.left) / rect.width) * box.width,
      y: box.y + ((event.clientY - rect.top) / rect.height) * box.height,
    };
  };
  svg.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault();
      const point = toGraph(event);
      zoom(event.deltaY > 0 ? 1.15 : 1 / 1.15, point.x, point.y);
    },
    { passive: false },
  );
  let drag;
  svg.addEventListener('pointerdown', (event) => {
    if (event.target.closest('.node')) return;
    drag = { x: event.clientX, y: event.clientY, box: { ...box } };
    svg.setPointerCapture(event.pointerId);
    svg.classList.add('panning');
  });
  svg.addEventListener('pointermove', (event) => {
    if (!drag) return;
    const rect = svg.getBoundingClientRect();
    box = {
      ...drag.box,
      x: drag.box.x - ((event.clientX - drag.x) / rect.width) * drag.box.width,
      y: drag.box.y - ((event.clientY - drag.y) / rect.height) * drag.box.height,
    };
    apply();
  });
  const end = () => {
    drag = undefined;
    svg.classList.remove('panning');
  };
  svg.addEventListener('pointerup', end);
  svg.addEventListener('pointercancel', end);
  return {
    zoom,
    /** The view and half of it again on every side: what a pan can reach before a redraw. */
    region() {
      return {
        x: box.x - box.width / 2,
        y: box.y - box.height / 2,
        width: box.width * 2,
        height: box.height * 2,
        detail: detailed(),
      };
    },
    /** Whether `region` (from {@link region}) still holds the whole view at its level of detail. */
    covers(region) {
      return (
        region !== undefined &&
        region.detail === detailed() &&
        box.x >= region.x &&
        box.y >= region.y &&
        box.x + box.width <= region.x + region.width &&
        box.y + box.height <= region.y + region.height
      );
    },
    /**
     * Shows the whole graph (`whole`), or as much of it as fits at a readable size: a graph wider
     * than the window starts at its left at 1:1, the rest a drag away.
     */
    fit(size, { whole = false } = {}) {
      content = size;
      const rect = svg.getBoundingClientRect();
      const aspect = rect.width > 0 && rect.height > 0 ? rect.height / rect.width : 0.6;
      const everything = Math.max(size.width, size.height / aspect);
      const width = whole ? everything : Math.min(everything, Math.max(rect.width, 400));
      box = { x: 0, y: 0, width, height: width * aspect };
      apply();
    },
  };
}
