// Drives the explorer page in headless Chromium for bench:explorer (explorer-bench.ts): loads it and
// reads its first render, records frame times while a gesture runs, pans, zooms, expands a node, and
// times `/api/graph` from Node.
/// <reference lib="dom" />
// (The functions handed to page.evaluate run in the browser: DOM types for them.)
import type { Browser, Page } from 'playwright-core';
import { percentile } from './bench-statistics.js';

export const viewport = { width: 1500, height: 950 };
/** A frame this much longer than the 60 Hz budget counts the frames it swallowed as dropped. */
const frameBudgetMs = 1000 / 60;

/** What the page reports of itself, collected by the script the bench adds before the page runs. */
const probe = () => {
  const bench = {
    firstRender: undefined as undefined | { drawn: number; painted: number },
    frames: [] as number[],
    recording: false,
  };
  (window as unknown as { __explorerBench: typeof bench }).__explorerBench = bench;
  // The first time graph nodes are in the document; `painted` is after the frame that drew them
  // (a task queued from that frame's requestAnimationFrame runs once its paint is done).
  const observer = new MutationObserver(() => {
    if (!document.querySelector('#graph .node')) return;
    observer.disconnect();
    const drawn = performance.now();
    requestAnimationFrame(() =>
      setTimeout(() => {
        bench.firstRender = { drawn, painted: performance.now() };
      }, 0),
    );
  });
  observer.observe(document, { childList: true, subtree: true });
  let last: number | undefined;
  const tick = (now: number) => {
    if (bench.recording && last !== undefined) bench.frames.push(now - last);
    last = now;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
};

type BenchWindow = Window & { __explorerBench: { frames: number[]; recording: boolean } };

export interface FirstRender {
  /** Navigation start to the graph painted. */
  painted: number;
  /** Navigation start to the graph's nodes in the document. */
  drawn: number;
  /** The `/api/graph` request: sent to last byte. */
  graphRequest: number;
  graphBytes: number;
}

export async function loadPage(browser: Browser, url: string): Promise<{ page: Page; first: FirstRender }> {
  const page = await browser.newPage({ viewport });
  page.setDefaultTimeout(60_000);
  page.on('pageerror', (error) => {
    throw error;
  });
  // tsx (esbuild, keepNames) wraps named functions in `__name(...)`; functions sent to the page need it too.
  await page.addInitScript({ content: 'window.__name = (target) => target;' });
  await page.addInitScript(probe);
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction(
    () =>
      (window as unknown as BenchWindow & { __explorerBench: { firstRender?: unknown } }).__explorerBench
        .firstRender !== undefined,
  );
  const first = await page.evaluate(() => {
    const { firstRender } = (
      window as unknown as { __explorerBench: { firstRender: { drawn: number; painted: number } } }
    ).__explorerBench;
    const request = performance
      .getEntriesByType('resource')
      .find((entry) => entry.name.includes('/api/graph')) as PerformanceResourceTiming | undefined;
    return {
      ...firstRender,
      graphRequest: request ? request.responseEnd - request.startTime : Number.NaN,
      graphBytes: request?.decodedBodySize ?? Number.NaN,
    };
  });
  return { page, first };
}

export interface FrameSummary {
  gesture: string;
  frames: number;
  median: number;
  p95: number;
  max: number;
  dropped: number;
  seconds: number;
}

/** Records requestAnimationFrame intervals while `drive` runs. */
export async function recordFrames(
  page: Page,
  gesture: string,
  drive: () => Promise<void>,
): Promise<FrameSummary> {
  await page.evaluate(() => {
    const bench = (window as unknown as BenchWindow).__explorerBench;
    bench.frames = [];
    bench.recording = true;
  });
  const started = performance.now();
  await drive();
  // The frames the last input caused.
  await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
  );
  const seconds = (performance.now() - started) / 1000;
  const frames = await page.evaluate(() => {
    const bench = (window as unknown as BenchWindow).__explorerBench;
    bench.recording = false;
    return bench.frames;
  });
  const sorted = [...frames].sort((left, right) => left - right);
  const dropped = frames.reduce((sum, frame) => sum + Math.max(0, Math.round(frame / frameBudgetMs) - 1), 0);
  return {
    gesture,
    frames: frames.length,
    median: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    max: sorted.at(-1) ?? Number.NaN,
    dropped,
    seconds,
  };
}

/** A point of the graph away from its nodes, where a drag pans. */
async function emptyPoint(page: Page): Promise<{ x: number; y: number }> {
  return page.evaluate(() => {
    const svg = document.getElementById('graph')!;
    const rect = svg.getBoundingClientRect();
    for (let y = rect.top + rect.height / 2; y < rect.bottom - 5; y += 7) {
      for (let x = rect.left + 20; x < rect.right - 20; x += 13) {
        const hit = document.elementFromPoint(x, y);
        if (hit && svg.contains(hit) && !hit.closest('.node')) return { x, y };
      }
    }
    return { x: rect.left + 10, y: rect.bottom - 10 };
  });
}

export async function pan(page: Page, milliseconds: number): Promise<void> {
  const start = await emptyPoint(page);
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  const until = performance.now() + milliseconds;
  // Back and forth: right and down, then back, 400 px each way, one step per input event.
  for (let step = 0; performance.now() < until; step += 1) {
    const phase = (step % 80) / 40;
    const offset = phase <= 1 ? phase : 2 - phase;
    await page.mouse.move(start.x - 400 * offset, start.y - 150 * offset);
  }
  await page.mouse.up();
}

export async function zoom(page: Page, milliseconds: number): Promise<void> {
  const svg = await page.locator('#graph').boundingBox();
  if (!svg) throw new Error('the graph is not on the page');
  await page.mouse.move(svg.x + svg.width / 2, svg.y + svg.height / 2);
  const until = performance.now() + milliseconds;
  // Out by 1.15^16 (about 9x, most of the graph in view), then back in, and again.
  for (let step = 0; performance.now() < until; step += 1) {
    await page.mouse.wheel(0, step % 32 < 16 ? 100 : -100);
  }
}

/** Clicks a collapsed node and times it until the graph shows its checkpoints one by one, painted. */
export async function expand(
  page: Page,
  key: string,
): Promise<{ milliseconds: number; nodesBefore: number; nodesAfter: number }> {
  return page.evaluate(
    (nodeKey) =>
      new Promise((resolve) => {
        const svg = document.getElementById('graph')!;
        const nodesBefore = svg.querySelectorAll('.node').length;
        const started = performance.now();
        const observer = new MutationObserver(() => {
          const node = svg.querySelector(`.node[data-key="${nodeKey}"]`);
          if (!node || node.classList.contains('collapsed')) return;
          observer.disconnect();
          requestAnimationFrame(() =>
            setTimeout(
              () =>
                resolve({
                  milliseconds: performance.now() - started,
                  nodesBefore,
                  nodesAfter: svg.querySelectorAll('.node').length,
                }),
              0,
            ),
          );
        });
        observer.observe(svg, { childList: true });
        svg
          .querySelector(`.node[data-key="${nodeKey}"]`)!
          .dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
      }),
    key,
  );
}

export interface GraphRequests {
  /** The first request: the listing, the layout and its JSON. */
  first: number;
  /** The same request again: answered from the graph cache. */
  cached: number[];
  /** Another node expanded each time: a new layout of the listing already read. */
  expanded: number[];
}

/**
 * `/api/graph` timed from Node with nothing else running (no page): what the server adds to a
 * page's first render, and what the graph cache saves on every later load.
 */
export async function timeGraphRequests(url: string, repeat: number): Promise<GraphRequests> {
  const address = new URL(url);
  // The printed URL carries the token in its fragment (`#token=`), which fetch never sends.
  const token = new URLSearchParams(address.hash.slice(1)).get('token') ?? address.searchParams.get('token');
  const headers = { 'x-crewline-token': token ?? '' };
  const request = async (expand: string[] = []) => {
    const started = performance.now();
    const response = await fetch(
      new URL(
        `/api/graph${expand.length > 0 ? `?expand=${encodeURIComponent(expand.join(','))}` : ''}`,
        address,
      ),
      { headers },
    );
    const body = (await response.json()) as {
      groups: { lanes: { nodes: { key: string; ids: string[] }[] }[] }[];
    };
    return { milliseconds: performance.now() - started, body };
  };
  const first = await request();
  const cached: number[] = [];
  for (let round = 0; round < repeat; round += 1) cached.push((await request()).milliseconds);
  const collapsed = first.body.groups.flatMap((group) =>
    group.lanes.flatMap((lane) => lane.nodes.filter((node) => node.ids.length > 1).map((node) => node.key)),
  );
  const expanded: number[] = [];
  for (let round = 0; round < repeat; round += 1)
    expanded.push((await request([collapsed[round * 7]!])).milliseconds);
  return { first: first.milliseconds, cached, expanded };
}
