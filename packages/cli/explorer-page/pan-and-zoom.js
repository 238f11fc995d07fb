// Zoom and pan of the lineage graph: the wheel, the buttons and dragging change the `viewBox` of
// its svg, once per animation frame however many events the frame received, and say which region
// to draw and at which level of detail (graph.js draws it).

/** Below this many screen pixels per graph unit, lanes are drawn as overviews (text unreadable there). */
const detailScale = 0.35;

/**
 * Zoom and pan by changing the `viewBox` of `svg`; `onChange(view)` after every change. Returns
 * `fit()` to show the whole graph, `region()` to draw around the view, `covers(region)`.
 */
export function panAndZoom(svg, { onChange } = {}) {
  let box = { x: 0, y: 0, width: 800, height: 500 };
  let content = { width: 800, height: 500 };
  // A wheel or a drag sends several events a frame: each moves `box`, and the view follows once
  // per frame, so one frame never draws (or redraws its region) twice.
  let frame;
  const apply = () => {
    if (frame !== undefined) return;
    frame = requestAnimationFrame(() => {
      frame = undefined;
      svg.setAttribute('viewBox', `${box.x} ${box.y} ${box.width} ${box.height}`);
      onChange?.();
    });
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
    drag = {
      x: event.clientX,
      y: event.clientY,
      box: { ...box },
      overview: event.target.closest('.overview') !== null,
    };
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
  svg.addEventListener('pointerup', (event) => {
    const clicked = drag?.overview && Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < 4;
    end();
    if (!clicked) return;
    // A click on a lane far out zooms in there, to where its nodes have their text and answer clicks.
    const width = svg.getBoundingClientRect().width;
    const point = toGraph(event);
    zoom(width / (detailScale * 1.25) / box.width, point.x, point.y);
  });
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
     * Brings `point` and `margin` around it into view; nothing when they already are. Near the view,
     * it zooms out a little to show both (the lane names at the left stay); farther, it pans at the
     * same zoom. Returns whether the view moved.
     */
    reveal(point, margin = { x: 0, y: 0 }) {
      const left = Math.min(box.x, point.x - margin.x);
      const top = Math.min(box.y, point.y - margin.y);
      const right = Math.max(box.x + box.width, point.x + margin.x);
      const bottom = Math.max(box.y + box.height, point.y + margin.y);
      if (right - left === box.width && bottom - top === box.height) return false;
      const aspect = box.height / box.width;
      const width = Math.max(right - left, (bottom - top) / aspect);
      if (width <= box.width * 1.5) {
        box = { x: left, y: top, width, height: width * aspect };
        apply();
        return true;
      }
      const along = (start, size, low, high) => {
        if (high - low > size) return (low + high) / 2 - size / 2;
        if (low < start) return low;
        if (high > start + size) return high - size;
        return start;
      };
      const x = along(box.x, box.width, point.x - margin.x, point.x + margin.x);
      const y = along(box.y, box.height, point.y - margin.y, point.y + margin.y);
      if (x === box.x && y === box.y) return false;
      box = { ...box, x, y };
      apply();
      return true;
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
