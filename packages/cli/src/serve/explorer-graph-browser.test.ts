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
