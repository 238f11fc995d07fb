// The lineage explorer page: loads the graph, opens checkpoints, compares two, starts runs, and
// follows the server's event stream. Every API request carries the token of the URL it was opened with.
import { detailView } from './detail-view.js';
import { diffView } from './diff-view.js';
import { h, plural, replace } from './dom.js';
import { drawGraph, nodeMargin, positions } from './graph.js';
import { panAndZoom } from './pan-and-zoom.js';

const tokenKey = 'crewline-explorer-token';

/**
 * The token of the URL the page was opened with: `#token=` as `crewline checkpoint serve` prints it
 * (a fragment never reaches a server, a log or a Referer), or `?token=` as older versions printed it.
 * Kept in sessionStorage (this tab and this origin, port included: no other local server sees it, as
 * every one saw the cookie an earlier version kept it in), so a reload keeps working; the address bar
 * keeps no copy that a screenshot or the history would show.
 */
function takeToken() {
  const given =
    new URLSearchParams(window.location.hash.slice(1)).get('token') ??
    new URLSearchParams(window.location.search).get('token');
  if (given) window.sessionStorage.setItem(tokenKey, given);
  if (window.location.hash !== '' || window.location.search !== '')
    window.history.replaceState(null, '', window.location.pathname);
  return given ?? window.sessionStorage.getItem(tokenKey) ?? '';
}

const token = takeToken();

/**
 * How the page names the CLI in a command it shows: as the server was run (`pnpm crewline` under
 * pnpm), which its session says; `crewline` before the session came.
 */
function cliCommand() {
  return state.session?.command ?? 'crewline';
}

/** What the page says when no answer came at all (the browser's own words are "Failed to fetch"). */
function serverGone() {
  return `The explorer server does not answer: it was stopped (Ctrl+C) or cannot be reached. Start \`${cliCommand()} checkpoint serve\` again and open the URL it prints.`;
}

async function api(path, init = {}) {
  let response;
  try {
    response = await fetch(path, {
      ...init,
      headers: { 'x-crewline-token': token, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    });
  } catch {
    showServerGone();
    throw new Error(serverGone());
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error ?? `${response.status} ${response.statusText}`);
  return body;
}

const state = {
  session: undefined,
  graph: undefined,
  expanded: new Set(),
  open: undefined,
  compare: [],
  runs: new Map(),
  // Ids of the runs this page started: their new checkpoints are brought into view as they appear.
  started: new Set(),
  // A run of this page ended: its last checkpoint may come with the next graph, so follow it once more.
  followOnce: false,
};

const svg = document.getElementById('graph');
// What is drawn: the region around the view at the last redraw; a pan or zoom past it redraws.
let drawnRegion;
const view = panAndZoom(svg, {
  onChange: () => {
    if (state.graph && !view.covers(drawnRegion)) redraw();
  },
});
const panels = {
  detail: document.getElementById('detail'),
  diff: document.getElementById('diff'),
  runs: document.getElementById('runs'),
};
const status = document.getElementById('status');

/** The header's badge says the server is gone (the event stream's "reconnecting" may never end). */
function showServerGone() {
  const live = document.getElementById('live');
  live.textContent = 'server stopped';
  live.className = 'badge gone';
  live.title = serverGone();
}

function showPanel(name) {
  for (const [key, panel] of Object.entries(panels)) panel.hidden = key !== name;
  for (const tab of document.querySelectorAll('[data-panel]'))
    tab.setAttribute('aria-selected', String(tab.dataset.panel === name));
}

function runningRuns() {
  return [...state.runs.values()].filter((run) => run.status === 'running');
}

function selection() {
  return {
    open: state.open,
    compare: state.compare,
    continuing: runningRuns().map((run) => run.checkpoint),
  };
}

function redraw() {
  if (!state.graph) return undefined;
  drawnRegion = view.region();
  // A redraw may make the focused node's element again: the keyboard's place is kept.
  const focused = svg.contains(document.activeElement) ? document.activeElement.dataset?.id : undefined;
  const layout = drawGraph(svg, state.graph, selection(), drawnRegion);
  if (focused !== undefined && !svg.contains(document.activeElement)) {
    const key = layout.byId.get(focused)?.node.key;
    svg.querySelector(`.node[data-key="${CSS.escape(key ?? '')}"]`)?.focus({ preventScroll: true });
  }
  return layout;
}

async function loadGraph({ fit = false, whole = false } = {}) {
  const expand = [...state.expanded].join(',');
  const graph = await api(`/api/graph${expand ? `?expand=${encodeURIComponent(expand)}` : ''}`);
  const before = state.graph ? positions(state.graph).byId : undefined;
  if (fit) {
    // No graph while the view moves, so the move draws nothing: the new graph is drawn once, below.
    state.graph = undefined;
    const { width, height } = positions(graph);
    view.fit({ width, height }, { whole });
  }
  state.graph = graph;
  redraw();
  if (before && !fit) followNewCheckpoints(before);
  const { count, nodeCount } = state.graph;
  status.textContent = `${plural(count, 'checkpoint')}, ${plural(nodeCount, 'node')}`;
  document.body.dataset.checkpoints = String(count);
  const empty = document.getElementById('empty');
  empty.hidden = count > 0;
  if (count === 0)
    empty.textContent = `No checkpoints in ${state.session.location} yet. A crew or flow run with checkpointing into this location shows up here as it writes them; this page follows it live.`;
}

/**
 * While a run started from this page goes on (and once more when it ended), the newest checkpoint
 * that was not on the graph before is panned into view: a fork's new lane may be drawn off screen.
 */
function followNewCheckpoints(before) {
  const follow = state.followOnce || runningRuns().some((run) => state.started.has(run.id));
  // Once: a run that ended without a new checkpoint does not make a later writer's be followed.
  state.followOnce = false;
  if (!follow) return;
  const layout = positions(state.graph);
  const added = [...layout.byId.entries()].filter(([id]) => !before.has(id)).map(([, place]) => place);
  if (added.length === 0) return;
  const newest = added.reduce((last, place) => (place.node.createdAt > last.node.createdAt ? place : last));
  view.reveal(newest, nodeMargin);
}

async function openCheckpoint(id) {
  state.open = id;
  redraw();
  showPanel('detail');
  replace(panels.detail, h('p', { class: 'muted' }, 'loading…'));
  try {
    const detail = await api(`/api/checkpoints/${encodeURIComponent(id)}`);
    replace(
      panels.detail,
      detailView(detail, {
        readOnly: state.session.readOnly,
        onCompare: addToComparison,
        onRun: startRun,
        onPlan: (changes) =>
          api(`/api/checkpoints/${encodeURIComponent(id)}/plan`, {
            method: 'POST',
            body: JSON.stringify(changes),
          }),
        loadEvent: (sequence) => api(`/api/checkpoints/${encodeURIComponent(id)}/events/${sequence}`),
      }),
    );
  } catch (error) {
    replace(panels.detail, h('p', { class: 'error' }, error.message));
  }
}

async function addToComparison(id) {
  state.compare = [...state.compare.filter((other) => other !== id), id].slice(-2);
  redraw();
  if (state.compare.length < 2) {
    showPanel('diff');
    replace(
      panels.diff,
      h(
        'p',
        { class: 'muted' },
        `A: ${id}. Shift+click (or Shift+Enter, or "Add to comparison") a second checkpoint.`,
      ),
    );
    return;
  }
  const [a, b] = state.compare;
  showPanel('diff');
  replace(panels.diff, h('p', { class: 'muted' }, 'comparing…'));
  try {
    replace(
      panels.diff,
      diffView(await api(`/api/diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`)),
    );
  } catch (error) {
    replace(panels.diff, h('p', { class: 'error' }, error.message));
  }
}

/** The header's note of a run going on: its newest progress line, before any checkpoint of it shows. */
function drawActivity() {
  const activity = document.getElementById('activity');
  const running = runningRuns();
  activity.hidden = running.length === 0;
  const newest = running.at(-1);
  if (!newest) return;
  const others = running.length > 1 ? ` and ${plural(running.length - 1, 'other run')}` : '';
  // The line without its clock time: the badge is short.
  const line = (newest.lines.at(-1) ?? 'starting…').replace(/^\d\d:\d\d:\d\d\s+/, '');
  activity.textContent = `${newest.mode} running${others}: ${line}`;
}

function drawRuns() {
  drawActivity();
  const runs = [...state.runs.values()].reverse();
  replace(
    panels.runs,
    h('h2', null, 'Runs'),
    runs.length === 0
      ? h(
          'p',
          { class: 'muted' },
          state.session?.readOnly
            ? `This explorer is read-only: start it with \`${cliCommand()} checkpoint serve --allow-resume\` to resume and fork from the page.`
            : 'No runs started from this page yet: open a checkpoint and use its "Continue from here" form.',
        )
      : null,
    runs.map((run) =>
      h(
        'section',
        { class: `run status-${run.status}`, 'data-run': run.id },
        h(
          'h3',
          null,
          `${run.mode} of ${run.checkpoint} `,
          h('span', { class: `badge status-${run.status}` }, run.status),
        ),
        run.branch ? h('p', null, `branch ${run.branch}`) : null,
        h('pre', { class: 'lines' }, run.lines.join('\n')),
        run.error ? h('p', { class: 'error' }, run.error) : null,
        run.pause
          ? h(
              'p',
              { class: 'warning paused-question' },
              `Paused: ${run.pause.method} waits for an answer: `,
              h('strong', null, run.pause.message),
              " Open the run's last checkpoint and give the answer in its form.",
            )
          : null,
        run.output !== undefined
          ? h('details', null, h('summary', null, 'Output'), h('pre', null, run.output))
          : null,
      ),
    ),
  );
}

async function startRun(request) {
  const run = await api('/api/runs', { method: 'POST', body: JSON.stringify(request) });
  // The event stream may have told a newer state already (a run that failed as it started): the
  // answer, the run as it started, does not overwrite it.
  if (!state.runs.has(run.id)) state.runs.set(run.id, run);
  state.started.add(run.id);
  drawRuns();
  redraw();
  showPanel('runs');
}

/** A click, or Enter or Space on a focused node: opens it (expanding a ×N node), or with a modifier compares it. */
function activate(node, event) {
  const { id, key } = node.dataset;
  if (event.shiftKey || event.ctrlKey || event.metaKey) {
    void addToComparison(id);
    return;
  }
  if (node.classList.contains('collapsed')) {
    state.expanded.add(key);
    void loadGraph();
  }
  void openCheckpoint(id);
}
svg.addEventListener('click', (event) => {
  const node = event.target.closest('.node');
  if (node) activate(node, event);
});
// A node reached with Tab may lie outside the view: the view comes to it.
svg.addEventListener('focusin', (event) => {
  const node = event.target.closest?.('.node');
  const place = node && state.graph ? positions(state.graph).byKey.get(node.dataset.key) : undefined;
  if (place) view.reveal(place, nodeMargin);
});
svg.addEventListener('keydown', (event) => {
  const node = event.target.closest?.('.node');
  if (node && (event.key === 'Enter' || event.key === ' ')) {
    event.preventDefault();
    activate(node, event);
  }
});
document.getElementById('activity').addEventListener('click', () => showPanel('runs'));
document.getElementById('zoom-in').addEventListener('click', () => view.zoom(1 / 1.3));
document.getElementById('zoom-out').addEventListener('click', () => view.zoom(1.3));
document.getElementById('fit').addEventListener('click', () => {
  state.expanded.clear();
  void loadGraph({ fit: true, whole: true });
});
for (const tab of document.querySelectorAll('[data-panel]'))
  tab.addEventListener('click', () => showPanel(tab.dataset.panel));

/** Checkpoints deleted or pruned elsewhere leave the selection; an open one says it is gone. */
function forgetRemoved(removed) {
  if (removed.size === 0) return;
  state.compare = state.compare.filter((id) => !removed.has(id));
  if (state.open !== undefined && removed.has(state.open)) {
    const gone = state.open;
    state.open = undefined;
    replace(
      panels.detail,
      h('p', { class: 'muted removed' }, `Checkpoint ${gone} was deleted or pruned since it was opened.`),
    );
  }
}

function follow() {
  // An EventSource cannot set a header: the server takes the token from this URL's query here only.
  const events = new EventSource(`/api/events?token=${encodeURIComponent(token)}`);
  const live = document.getElementById('live');
  events.addEventListener('open', () => {
    live.textContent = 'live';
    live.className = 'badge live';
  });
  events.addEventListener('error', () => {
    // A request found the server gone: that stays said until the stream is open again.
    if (live.classList.contains('gone')) return;
    live.textContent = 'reconnecting';
    live.className = 'badge';
  });
  events.addEventListener('checkpoints', (event) => {
    const { removed = [] } = JSON.parse(event.data);
    forgetRemoved(new Set(removed));
    void loadGraph();
  });
  events.addEventListener('progress', (event) => {
    const { run, line } = JSON.parse(event.data);
    state.runs.get(run)?.lines.push(line);
    drawRuns();
  });
  events.addEventListener('run', (event) => {
    const run = JSON.parse(event.data);
    const before = state.runs.get(run.id);
    state.runs.set(run.id, run);
    if (run.status !== 'running' && before?.status === 'running' && state.started.has(run.id))
      state.followOnce = true;
    drawRuns();
    // The ring on the checkpoint a run continues comes and goes with the run.
    if ((before?.status ?? 'none') !== run.status) redraw();
  });
}

async function start() {
  try {
    state.session = await api('/api/session');
  } catch (error) {
    replace(document.getElementById('graph-pane'), h('p', { class: 'error' }, error.message));
    return;
  }
  document.getElementById('location').textContent = `${state.session.location} (${state.session.provider})`;
  const mode = document.getElementById('mode');
  mode.textContent = state.session.readOnly ? 'read-only' : 'resume allowed';
  mode.className = `badge ${state.session.readOnly ? '' : 'writable'}`;
  drawRuns();
  showPanel('detail');
  await loadGraph({ fit: true });
  follow();
  document.body.dataset.ready = 'true';
}

void start();
