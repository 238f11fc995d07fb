/// <reference lib="dom" />
// (The functions handed to page.evaluate run in the browser: DOM types for them.)
import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { type Fixture, writeFixture } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

// The system's Chromium (Debian's `chromium` package), never a downloaded one; skipped without it
// outside CI, as explorer-browser.test.ts is.
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(chromiumPath);
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

/** What the test uses of the page's `graph.js` (plain JavaScript: described here). */
interface Place {
  x: number;
  y: number;
  node: { key: string; id: string };
}
interface GraphModule {
  positions(graph: unknown): { byKey: Map<string, Place>; width: number; height: number };
  drawGraph(svg: SVGSVGElement, graph: unknown, selection: unknown, region: unknown): unknown;
}

/** Waits until two animation frames have run: whatever the last input scheduled is drawn. */
const frames = (page: Page) =>
  page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));

describe.skipIf(!haveBrowser && !inCi)('the lineage graph in Chromium: zoom and pan', () => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let fixture: Fixture;
  let explorer: RunningExplorer;
  let browser: Browser;
  let page: Page;
  const registry = cliProviderRegistry();

  beforeAll(async () => {
    directory = await temporaryDirectory('crewline-graph-browser-');
    fixture = await writeFixture('sqlite', directory.path);
    explorer = await startExplorer({
      opened: await openLocation(fixture.location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
    });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    page.setDefaultTimeout(10_000);
    await page.goto(explorer.url);
    await page.waitForSelector('body[data-ready="true"]');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await explorer?.close();
    await fixture?.provider.close?.();
    await registry.close();
    await directory?.remove();
  });

  it('applies the wheel events of one frame to the view once', async () => {
    await frames(page);
    const writes = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const svg = document.getElementById('graph')!;
          let count = 0;
          const observer = new MutationObserver((records) => {
            count += records.filter((record) => record.attributeName === 'viewBox').length;
          });
          observer.observe(svg, { attributes: true });
          const rect = svg.getBoundingClientRect();
          // A fast wheel: a dozen events before the next frame.
          for (let step = 0; step < 12; step += 1)
            svg.dispatchEvent(
              new WheelEvent('wheel', {
                deltaY: 100,
                clientX: rect.left + rect.width / 2,
                clientY: rect.top + rect.height / 2,
                bubbles: true,
                cancelable: true,
              }),
            );
          requestAnimationFrame(() =>
            requestAnimationFrame(() => {
              observer.disconnect();
              resolve(count);
            }),
          );
        }),
    );
    expect(writes).toBe(1);
  });

  it('redraws the same graph keeping the node elements still in the region, making only the new ones', async () => {
    // The page's own module, imported in the page (a string: kept from the test runner's transform).
    await page.evaluate("import('/assets/graph.js').then((module) => { window.graphModule = module; })");
    const result = await page.evaluate(async (token) => {
      const { drawGraph, positions } = (window as unknown as { graphModule: GraphModule }).graphModule;
      const graph = await (await fetch('/api/graph', { headers: { 'x-crewline-token': token } })).json();
      const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
      document.body.append(svg);
      const layout = positions(graph);
      const places = [...layout.byKey.values()].sort((left, right) => left.x - right.x);
      const first = places[0]!;
      const selection = { open: undefined, compare: [] };
      const node = () => svg.querySelector(`.node[data-key="${first.node.key}"]`);
      drawGraph(svg, graph, selection, { x: first.x - 1, y: first.y - 1, width: 2, height: 2, detail: true });
      const before = node();
      const drawnBefore = svg.querySelectorAll('.node').length;
      drawGraph(svg, graph, selection, {
        x: 0,
        y: 0,
        width: layout.width,
        height: layout.height,
        detail: true,
      });
      const kept = node() === before;
      const drawnAfter = svg.querySelectorAll('.node').length;
      // Another selection draws every node again (their classes say what is open or compared).
      drawGraph(
        svg,
        graph,
        { open: first.node.id, compare: [] },
        { x: 0, y: 0, width: layout.width, height: layout.height, detail: true },
      );
      const redrawn = node() !== before && node()?.classList.contains('open');
      svg.remove();
      return { kept, redrawn, drawnBefore, drawnAfter, total: layout.byKey.size };
    }, explorer.token);
    expect(result.drawnBefore).toBeLessThan(result.total);
    expect(result.drawnAfter).toBe(result.total);
    expect(result.kept).toBe(true);
    expect(result.redrawn).toBe(true);
  });

  it('draws lanes as overviews when zoomed too far out for text, and a click on one zooms in there', async () => {
    const box = (await page.locator('#graph').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    for (let step = 0; step < 30; step += 1) await page.mouse.wheel(0, 100);
    await frames(page);
    expect(await page.locator('#graph .overview').count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator('#graph .node').count()).toBe(0);
    expect(await page.locator('#graph .overview-head').count()).toBe(2);
    await page.locator('#graph .overview[data-branch="main"] .overview-head').click();
    await frames(page);
    expect(await page.locator('#graph .overview').count()).toBe(0);
    expect(await page.locator('#graph .node').count()).toBeGreaterThan(0);
  });
});
